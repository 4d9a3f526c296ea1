"""The parity oracle: NeMo Gym 0.7.0's own example resources server with Gym's telemetry on.

This file is ours (a harness); every class it serves is Gym's, imported from the installed
``nemo-gym==0.7.0`` wheel (see ``install.sh``):

* the server is ``resources_servers.example_single_tool_call``'s ``SimpleWeatherResourcesServer``
  (Gym's ``SimpleResourcesServer``), built by Gym's own ``setup_telemetry``,
  ``setup_webserver``, ``setup_liveness`` and ``instrument_app_for_telemetry``: a tool call is
  ``POST /get_weather``, a limited verify is ``POST /verify`` (Gym's ``traced_verify_endpoint``);
* one route is added here, ``POST /oracle/sandbox``: one sandbox through Gym's ``AsyncSandbox``
  and ``LocalProvider`` (start, one ``exec``, stop), which is where Gym records its sandbox
  spans and ``gym.sandbox.*`` metrics;
* ``POST /oracle/flush`` makes the OpenTelemetry providers export now.

Telemetry setup. Gym's ``init_telemetry`` is tried first. Gym 0.7.0 was built against an
unpublished nemo-lens commit: the registry's only nemo-lens, 0.1.0, lacks
``nemo.lens.semconv.NV_DL_RANK`` and ``nemo.lens.groups.SpanRegistry``, so ``init_telemetry``
returns ``None`` there. Then the harness does what ``init_telemetry`` would, with nemo-lens
0.1.0's own ``setup_telemetry`` (its providers, resource and OTLP exporters), Gym's own
resource attributes (``_build_resource_attributes``) and every Gym span group switched on, and
hands the handle to Gym's telemetry module. The ready line says which path ran.

Prints one JSON line ``{"type": "ready", ...}`` on stdout when it listens (127.0.0.1, a port
the OS picks). Stops on SIGTERM/SIGINT, flushing its exporters.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import socket
import sys

SERVER_NAME = os.environ.get("GYM_ORACLE_SERVER_NAME", "example_single_tool_call")


def _setup_telemetry(server) -> dict:
    """Gym's own telemetry setup, else nemo-lens 0.1.0's with Gym's attributes. Returns facts."""
    from nemo_gym.telemetry import setup as gym_setup

    server.setup_telemetry()
    if gym_setup.get_telemetry() is not None:
        return {"telemetry": "gym.init_telemetry"}

    reason = "gym.init_telemetry returned None"
    try:
        from nemo.lens.semconv import NV_DL_RANK  # noqa: F401
    except ImportError as exc:
        reason = f"nemo-lens on the registry cannot serve Gym 0.7.0's init_telemetry: {exc}"

    from nemo.lens import NemoLensConfig, setup_telemetry
    from nemo.lens.state import set_enabled_span_groups
    from nemo_gym.server_utils import _telemetry_server_type
    from nemo_gym.telemetry.span_groups import GymSpanGroup

    config = NemoLensConfig.from_env(prefix=gym_setup._OTEL_PREFIX, fallback_prefix=gym_setup._OTEL_FALLBACK_PREFIX)
    service_group = config.service_name
    config.service_name = f"{service_group}/{SERVER_NAME}"
    # nemo-lens 0.1.0 resolves span groups against its own names only (no registry for Gym's):
    # set up with its default, then switch on Gym's groups below.
    config.span_groups = "default"
    attrs = gym_setup._build_resource_attributes(SERVER_NAME, _telemetry_server_type(type(server)))
    attrs["nemo.gym.service_group"] = service_group
    handle = setup_telemetry(config, resource_attributes=attrs)
    set_enabled_span_groups(frozenset(GymSpanGroup.ALL_GROUPS))
    gym_setup._TELEMETRY_HANDLE = handle
    gym_setup._METRICS_EXPORTING = bool(config.metrics_enabled and handle.is_exporting)
    return {"telemetry": "nemo-lens 0.1.0 setup_telemetry with Gym's attributes", "fallback_reason": reason}


def _flush() -> None:
    from opentelemetry import metrics, trace

    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        flush = getattr(provider, "force_flush", None)
        if flush is not None:
            flush()


def _shutdown() -> None:
    from opentelemetry import metrics, trace

    _flush()
    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        stop = getattr(provider, "shutdown", None)
        if stop is not None:
            stop()


def build_app():
    from omegaconf import OmegaConf
    from resources_servers.example_single_tool_call.app import (
        SimpleWeatherResourcesServer,
        SimpleWeatherResourcesServerConfig,
    )

    from nemo_gym.config_types import BaseServerConfig
    from nemo_gym.sandbox.api import AsyncSandbox
    from nemo_gym.sandbox.providers.base import SandboxSpec
    from nemo_gym.sandbox.providers.local.provider import LocalProvider
    from nemo_gym.server_utils import ServerClient

    config = SimpleWeatherResourcesServerConfig(
        name=SERVER_NAME, host="127.0.0.1", port=0, entrypoint="app.py", domain="agent"
    )
    client = ServerClient(
        head_server_config=BaseServerConfig(host="127.0.0.1", port=1), global_config_dict=OmegaConf.create({})
    )
    server = SimpleWeatherResourcesServer(config=config, server_client=client)
    facts = _setup_telemetry(server)

    app = server.setup_webserver()
    server.setup_liveness(app)

    @app.post("/oracle/sandbox")
    async def oracle_sandbox() -> dict:
        sandbox = AsyncSandbox(LocalProvider(shell="/bin/sh"), SandboxSpec())
        await sandbox.start()
        try:
            result = await sandbox.exec("echo parity", timeout_s=30)
        finally:
            await sandbox.stop()
        return {"return_code": result.return_code}

    @app.post("/oracle/flush")
    async def oracle_flush() -> dict:
        await asyncio.to_thread(_flush)
        return {"flushed": True}

    server.instrument_app_for_telemetry(app)
    return app, facts


async def serve() -> None:
    import uvicorn

    import nemo_gym.package_info

    app, facts = build_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: setattr(uv, "should_exit", True))
    task = asyncio.create_task(uv.serve(sockets=[sock]))
    while not uv.started and not task.done():
        await asyncio.sleep(0.02)
    ready = {
        "type": "ready",
        "url": f"http://127.0.0.1:{port}",
        "pid": os.getpid(),
        "gym": nemo_gym.package_info.__version__,
        "python": sys.version.split()[0],
        **facts,
    }
    print(json.dumps(ready), flush=True)
    await task
    await asyncio.to_thread(_shutdown)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(serve())
