"""Record real provider traffic, replay it offline, import other tools' cassettes.

Modules, lowest first: ``sse`` (events kept exactly), ``format`` (the file), ``scrub``
(secrets never written), ``store`` (files on disk), ``matching`` (request signatures and
the diff of a miss), ``replay`` (the engine's recorded answers), ``capture`` (one
exchange as it passes), ``recorder`` (the proxy's writer), ``http1`` and ``upstream``
(the proxy's HTTP/1.1 and its pooled upstream connections), ``proxy`` (the recording
server), ``session`` (recording in process: the pytest record modes), ``importers``
(vcrpy, aimock), ``drift``. See docs/recording.md.
"""
