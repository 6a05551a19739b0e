"""A libiec61850 1.6.1 server with the capture's model (see capture_services.py) for
`crates/probe/tests/it/live_libiec61850.rs`: prints its port, serves until stdin closes.

PYTHONPATH must hold `interop/` and this directory.
"""
import sys

import capture_services as cs


def main():
    port = cs.free_port()
    L, server, _model, _cb = cs.build_server(port)
    print(port, flush=True)
    sys.stdin.read()
    L.IedServer_stop(server)
    L.IedServer_destroy(server)


if __name__ == "__main__":
    main()
