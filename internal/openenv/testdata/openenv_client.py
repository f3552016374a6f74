"""Drive a wildawm OpenEnv server with OpenEnv's own MCPToolClient.

Run by TestOpenEnvClientPython (openenv_python_test.go) with OPENENV_SRC,
the src directory of an OpenEnv checkout. OpenEnv's client modules are
imported from there unchanged (env_client.py, mcp_client.py,
client_types.py, env_server/types.py, env_server/mcp_types.py); what the
machine lacks is stood in for, offline and with the standard library:

- the package __init__ files (they import the server side: fastapi,
  fastmcp), by empty packages over the same directories;
- containers.runtime (Docker and uv providers the client never uses here);
- websockets.asyncio.client.connect, by a minimal RFC 6455 client.

Reads {"url", "task_id", "answer", "reference": [{"tool", "args"}]} on
stdin, prints a JSON report of what the client returned, and exits non-zero
on the first broken expectation.
"""

import asyncio
import base64
import importlib
import json
import os
import struct
import sys
import types
import urllib.parse


# --- a minimal WebSocket client standing in for websockets' connect ---


class _Conn:
    def __init__(self, reader, writer, max_size):
        self._r, self._w, self._max = reader, writer, max_size

    async def send(self, text):
        data = text.encode()
        head = bytearray([0x81])
        n = len(data)
        if n < 126:
            head.append(0x80 | n)
        elif n < 1 << 16:
            head.append(0x80 | 126)
            head += struct.pack("!H", n)
        else:
            head.append(0x80 | 127)
            head += struct.pack("!Q", n)
        mask = os.urandom(4)
        head += mask
        self._w.write(bytes(head) + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))
        await self._w.drain()

    async def _frame(self):
        b0, b1 = await self._r.readexactly(2)
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", await self._r.readexactly(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", await self._r.readexactly(8))
        if n > self._max:
            raise ConnectionError(f"frame of {n} bytes over max_size")
        return b0 & 0x80, b0 & 0x0F, await self._r.readexactly(n)

    async def recv(self):
        parts = []
        while True:
            fin, op, payload = await self._frame()
            if op == 0x8:
                raise ConnectionError(f"closed by the server: {payload[2:].decode(errors='replace')}")
            if op == 0x9:  # ping
                self._w.write(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
                continue
            if op in (0x1, 0x0):
                parts.append(payload)
                if fin:
                    return b"".join(parts).decode()

    async def close(self):
        try:
            self._w.write(bytes([0x88, 0x82]) + b"\0\0\0\0" + struct.pack("!H", 1000))
            await self._w.drain()
        finally:
            self._w.close()


async def _connect(url, open_timeout=10, max_size=1 << 20, **_):
    u = urllib.parse.urlsplit(url)
    reader, writer = await asyncio.wait_for(asyncio.open_connection(u.hostname, u.port), open_timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET {u.path or '/'} HTTP/1.1\r\nHost: {u.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    status = await reader.readline()
    if b" 101 " not in status:
        raise ConnectionError(f"handshake: {status!r}")
    while (await reader.readline()) not in (b"\r\n", b""):
        pass
    return _Conn(reader, writer, max_size)


def _install_stubs(src):
    ws = types.ModuleType("websockets")
    ws_asyncio = types.ModuleType("websockets.asyncio")
    ws_client = types.ModuleType("websockets.asyncio.client")
    ws_client.connect = _connect
    ws_client.ClientConnection = _Conn
    ws.asyncio, ws_asyncio.client = ws_asyncio, ws_client
    sys.modules.update({"websockets": ws, "websockets.asyncio": ws_asyncio, "websockets.asyncio.client": ws_client})
    for name in ("openenv", "openenv.core", "openenv.core.env_server", "openenv.core.containers"):
        pkg = types.ModuleType(name)
        pkg.__path__ = [os.path.join(src, *name.split("."))]
        sys.modules[name] = pkg
    runtime = types.ModuleType("openenv.core.containers.runtime")

    class _Unused:
        def __init__(self, *a, **k):
            raise RuntimeError("no container provider in this test")

    runtime.LocalDockerProvider = runtime.UVProvider = _Unused
    runtime.ContainerProvider = runtime.RuntimeProvider = _Unused
    sys.modules["openenv.core.containers.runtime"] = runtime


def expect(ok, what):
    if not ok:
        print(f"openenv_client.py: {what}", file=sys.stderr)
        sys.exit(1)


async def main():
    req = json.load(sys.stdin)
    _install_stubs(os.environ["OPENENV_SRC"])
    mcp_client = importlib.import_module("openenv.core.mcp_client")
    mcp_types = importlib.import_module("openenv.core.env_server.mcp_types")
    report = {}
    client = mcp_client.MCPToolClient(base_url=req["url"], message_timeout_s=300)
    async with client:
        # TRL's reset(**row): dataset columns beside the task's.
        r = await client.reset(task_id=req["task_id"], prompt=[{"role": "user", "content": "go"}], ground_truth=3)
        expect(isinstance(r.observation, mcp_types.ListToolsObservation), f"reset parsed as {type(r.observation).__name__}")
        tools = await client.list_tools(use_cache=False)
        expect(all(isinstance(t, mcp_types.Tool) for t in tools), "list_tools: not Tool models")
        expect(all(t.input_schema.get("type") == "object" for t in tools), "list_tools: a tool without its input_schema")
        report["tools"] = [t.name for t in tools]
        report["shell"] = await client.call_tool("shell", command="echo $((6*7))")
        try:
            await client.call_tool("teleport")
            expect(False, "call_tool of an unknown tool did not raise")
        except RuntimeError as e:
            report["unknown"] = str(e)
        # The episode again, played by the reference through call_tool.
        await client.reset(task_id=req["task_id"])
        for s in req["reference"]:
            res = await client.step(mcp_types.CallToolAction(tool_name=s["tool"], arguments=s["args"] or {}))
            expect(isinstance(res.observation, mcp_types.CallToolObservation), "a step's reply is no CallToolObservation")
            expect(res.observation.error is None and not res.done, f"reference step {s['tool']}: {res.observation}")
        res = await client.step(mcp_types.CallToolAction(tool_name="answer", arguments={"text": req["answer"]}))
        report["done"], report["reward"] = res.done, res.reward
        st = await client.state()
        report["step_count"] = st.step_count
    print(json.dumps(report))


asyncio.run(main())
