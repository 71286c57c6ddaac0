"""python -m polyblocks.explore [FILE | --model NAME] [--target T] [--port P]

Serves the explorer page on 127.0.0.1 and prints its address. FILE is an
MLIR file (the input contract) or a Python file that defines `model` and
`inputs` (PyTorch) or `function` and `args` (JAX); --model names a model of
the benchmark suite (or torchvision:ARCH). The program given is compiled
in the background at start, so the page shows it as soon as it is done;
any other program can be typed into the page. docs/Explorer.md.
"""
from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from .server import Explorer, serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m polyblocks.explore",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("file", nargs="?", help="an MLIR file or a Python file")
    parser.add_argument("--model", help="a model of the benchmark suite, or torchvision:ARCH")
    parser.add_argument("--target", default="cpu-host")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8765, help="0: any free port")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds one compile may take (default 900)")
    parser.add_argument("--max-request-bytes", type=int, default=4 << 20)
    parser.add_argument("--no-measure", action="store_true",
                        help="do not run the program to time its kernels")
    args = parser.parse_args(argv)
    if args.file and args.model:
        parser.error("give a FILE or --model, not both")

    initial = None
    if args.model:
        initial = {"model": args.model, "target": args.target}
    elif args.file:
        path = Path(args.file)
        if not path.is_file():
            parser.error(f"{path}: no such file")
        if path.suffix == ".py":
            initial = {"python": str(path.resolve()), "target": args.target}
        else:
            initial = {"source": path.read_text(), "target": args.target}
    if initial is not None:
        initial["measure"] = not args.no_measure

    explorer = Explorer(max_request_bytes=args.max_request_bytes, timeout_s=args.timeout,
                        initial=initial)
    if args.target not in explorer.targets:
        parser.error(f"unknown target {args.target!r}; known: {', '.join(explorer.targets)}")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: serving on {args.host}: anyone who reaches this address can "
              "make this machine compile and run programs", file=sys.stderr)
    server = serve(explorer, args.host, args.port)
    if initial is not None:
        # Compiled now, so that the page has it when it asks.
        threading.Thread(target=explorer.compile, args=(initial,), daemon=True).start()
    host, port = server.server_address[:2]
    print(f"PolyBlocks explorer: http://{host}:{port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
