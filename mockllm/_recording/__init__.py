"""Record real provider traffic, replay it offline, import other tools' cassettes.

Modules, lowest first: ``sse`` (events kept exactly), ``format`` (the file), ``scrub``
(secrets never written), ``store`` (files on disk), ``matching`` (request signatures and
the diff of a miss), ``replay`` (the engine's recorded answers), ``proxy`` (the recording
server), ``forward`` (recording in process), ``importers`` (vcrpy, aimock), ``drift``.
See docs/recording.md.
"""
