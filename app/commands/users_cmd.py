"""``arxiu users add|list|remove|passwd|token``: who may use the local API, and what they may do.

Passwords are read from stdin (``--password-stdin``, first line) or typed twice at a prompt;
only their salted scrypt hash is stored, in ``api_users.json`` in the config folder. ``token``
prints a new bearer token once (only its hash is kept).
"""

from __future__ import annotations

import argparse
import getpass
import sys

from app.api.users import UserStore
from app.commands.cli_words import words
from app.commands.common import print_json
from app.core.errors import ArxiuError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``users`` commands."""
    parser = sub.add_parser("users", help="manage the users of the local API (arxiu serve)")
    commands = parser.add_subparsers(dest="users_command", metavar="ACTION", required=True)
    add = commands.add_parser("add", help="add a user")
    add.add_argument("name", help="user name")
    add.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    add.add_argument("--can-write", action="store_true", help="may apply change plans")
    add.add_argument(
        "--can-read-restricted", action="store_true", help="may receive restricted records"
    )
    add.set_defaults(func=run_add)
    listing = commands.add_parser("list", help="the users and their permissions")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=run_list)
    remove = commands.add_parser("remove", help="remove a user and their tokens")
    remove.add_argument("name")
    remove.set_defaults(func=run_remove)
    passwd = commands.add_parser("passwd", help="set a user's password")
    passwd.add_argument("name")
    passwd.add_argument(
        "--password-stdin", action="store_true", help="read the password from stdin"
    )
    passwd.set_defaults(func=run_passwd)
    token = commands.add_parser("token", help="issue a bearer token (printed once)")
    token.add_argument("name")
    token.set_defaults(func=run_token)


def read_password(from_stdin: bool) -> str:
    """The password from stdin's first line, or typed twice at a prompt."""
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if not sys.stdin.isatty():
        raise ArxiuError(
            "user.password_invalid",
            "No password given.",
            hint="Pipe it in with --password-stdin, or run the command in a terminal.",
            category="input",
        )
    w = words().users
    first = getpass.getpass(w.password)
    if getpass.getpass(w.again) != first:
        raise ArxiuError(
            "user.password_invalid",
            "The two passwords differ.",
            hint="Try again.",
            category="input",
        )
    return first


def run_add(args: argparse.Namespace) -> int:
    """Add a user."""
    user = UserStore().add(
        args.name,
        read_password(args.password_stdin),
        can_write=args.can_write,
        can_read_restricted=args.can_read_restricted,
    )
    said = permissions(user.can_write, user.can_read_restricted)
    print(words().users.added.format(name=user.name, permissions=said))
    return 0


def permissions(can_write: bool, can_read_restricted: bool) -> str:
    """The permissions as words, in the chosen language."""
    w = words().users
    return ", ".join(
        [
            w.read,
            *([w.write] if can_write else []),
            *([w.restricted] if can_read_restricted else []),
        ]
    )


def run_list(args: argparse.Namespace) -> int:
    """List the users."""
    users = UserStore().list()
    if args.json:
        print_json(
            [
                {
                    "name": u.name,
                    "can_write": u.can_write,
                    "can_read_restricted": u.can_read_restricted,
                }
                for u in users
            ]
        )
        return 0
    if not users:
        print(words().users.none_yet, file=sys.stderr)
    for user in users:
        print(f"{user.name}\t{permissions(user.can_write, user.can_read_restricted)}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    """Remove a user."""
    UserStore().remove(args.name)
    print(words().users.removed.format(name=args.name))
    return 0


def run_passwd(args: argparse.Namespace) -> int:
    """Set a user's password."""
    UserStore().set_password(args.name, read_password(args.password_stdin))
    print(words().users.password_changed.format(name=args.name))
    return 0


def run_token(args: argparse.Namespace) -> int:
    """Issue a bearer token and print it (once)."""
    print(UserStore().issue_token(args.name))
    return 0
