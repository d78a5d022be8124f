"""A command line declared as data: ``Arg`` (what one ``add_argument`` call takes),
``OneOf`` (arguments of which at most one may be given) and ``Verb`` (a subcommand: the
function that runs it, whose docstring is its help, and its arguments).

``python -m harness`` is declared so (``harness.cli``; the review's arguments in
``harness.golden.review.cli``).
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Arg", "OneOf", "Verb", "add_arguments"]


class Arg:
    """One argument: ``add_argument``'s name or flags, and its options."""

    def __init__(self, *flags: str, **options: Any) -> None:
        self.flags = flags
        self.options = options


class OneOf:
    """Arguments of which at most one may be given (argparse's mutually exclusive group)."""

    def __init__(self, *arguments: Arg) -> None:
        self.arguments = arguments


def add_arguments(parser: argparse.ArgumentParser, arguments: Sequence[Arg | OneOf]) -> None:
    """Add ``arguments`` to ``parser``, in their order."""
    for argument in arguments:
        if isinstance(argument, OneOf):
            group = parser.add_mutually_exclusive_group()
            for one in argument.arguments:
                group.add_argument(*one.flags, **one.options)
        else:
            parser.add_argument(*argument.flags, **argument.options)


@dataclass(frozen=True)
class Verb:
    """A subcommand: ``run``, whose docstring's first paragraph is the verb's line in
    the command's help and the rest its own help's description; its arguments; and
    whether the options it does not know go on to pytest (``run`` then takes them too)."""

    run: Callable[..., int]
    arguments: Sequence[Arg | OneOf] = ()
    passes_on: bool = False

    def add_to(self, verbs: argparse._SubParsersAction[argparse.ArgumentParser], name: str) -> None:
        """Add this verb to the subcommands ``verbs`` as ``name``."""
        summary, _, description = (inspect.getdoc(self.run) or "").partition("\n\n")
        add_arguments(verbs.add_parser(name, help=summary, description=description), self.arguments)
