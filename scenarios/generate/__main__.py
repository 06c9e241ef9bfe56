"""``python -m scenarios.generate``: write a scenario pack (see the package docstring)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scenarios.engines import KNOWN_DOMAINS
from scenarios.generate.conversation import GenerationError
from scenarios.generate.pack import DEFAULT_SEED, build_builtin_pack, generate_pack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.generate", description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="Pack directory to write")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="Random seed")
    parser.add_argument("--domain", choices=KNOWN_DOMAINS, help="One domain (default: all)")
    parser.add_argument("--n", type=int, help="Records for --domain (default: its catalogue)")
    args = parser.parse_args(argv)
    if args.n is not None and args.domain is None:
        parser.error("--n needs --domain")
    try:
        if args.domain is None:
            written = build_builtin_pack(args.out, args.seed)
        else:
            from scenarios.generate.pack import catalogue_size

            n = args.n if args.n is not None else catalogue_size(args.domain)
            written = {args.domain: generate_pack(args.domain, n, args.seed, args.out)}
    except (GenerationError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for domain, ids in written.items():
        print(f"{domain}: {len(ids)} records -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
