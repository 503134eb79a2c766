"""The terminal front end: ``arxiu`` opens the app; ``arxiu COMMAND`` works headless.

Subcommands live in :mod:`app.commands`, one module per family; each registers itself on the
parser. Known errors (:class:`~app.core.errors.ArxiuError`) print their code, the code's label
in the CLI's language, their message and hint, and exit with 2 (input) or 3 (anything else);
anything else is a bug: its traceback is logged (once: :func:`~app.core.errors.log_bug`) and the
exit code is 1. The table is :mod:`app.commands.exits`. What the CLI says of a bug and of a
Ctrl+C is in the CLI's language (:mod:`app.commands.cli_words`). The help, and what argparse
itself says (``usage:``, its errors), are in the CLI's language too
(:mod:`app.commands.help_words`).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from app import __version__
from app.commands import COMMAND_MODULES
from app.commands.cli_words import cli_language, error_lines, words
from app.commands.common import ARCHIVE_HELP, ARCHIVE_METAVAR
from app.commands.exits import EXIT_BUG, EXIT_INTERRUPTED, EXIT_PIPE_CLOSED, exit_code
from app.commands.help_words import argparse_words, localize
from app.core.errors import ArxiuError, log_bug

log = logging.getLogger("arxiu")


def build_parser() -> argparse.ArgumentParser:
    """The full ``arxiu`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="arxiu",
        description="Arxiu: a local-first assistant for archivists. "
        "With no command it opens the desktop app.",
    )
    parser.add_argument("--version", action="version", version=f"arxiu {__version__}")
    parser.add_argument("--archive", metavar=ARCHIVE_METAVAR, help=ARCHIVE_HELP)
    parser.add_argument(
        "--screenshot", metavar="PNG", help="open the window, wait until idle, save a PNG, exit"
    )
    parser.add_argument(
        "--show",
        choices=[
            "main",
            "conversation",
            "composed-answer",
            "confirm-card",
            "record",
            "record-hierarchy",
            "import",
            "import-csv-mapping",
            "search",
        ],
        default="main",
        help="with --screenshot: the state to render",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def print_error(error: ArxiuError) -> None:
    """Print a coded error for a person on stderr: its code, its label in the CLI's language
    (:func:`~app.commands.cli_words.error_lines`), its message and its hint."""
    print("\n".join(error_lines(error)), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``arxiu`` console script. Its help and argparse's words (``usage:``,
    its errors) are said in the CLI's language (:mod:`app.commands.help_words`)."""
    lang = cli_language()
    parser = build_parser()
    localize(parser, lang)
    with argparse_words(lang):
        args = parser.parse_args(argv)
    try:
        if args.command is None:
            from app.main import run_app

            return run_app(args)
        code: int = args.func(args)
        return code
    except ArxiuError as error:
        print_error(error)
        return exit_code(error.category)
    except KeyboardInterrupt:
        print(words().interrupted, file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``arxiu … | head``): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE_CLOSED
    except Exception as error:  # a bug: logged with its traceback, a non-zero exit
        log_bug(log, error, f"arxiu {args.command or ''}".strip())
        print(words().bug.format(name=type(error).__name__), file=sys.stderr)
        return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main())
