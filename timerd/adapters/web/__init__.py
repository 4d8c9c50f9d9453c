"""The web scoreboard and the HTTP/WebSocket API, served by the daemon itself (docs/api.md).

`adapter` is the WebServer adapter (the pages, the API's routes, the stream to every browser,
the token check); `server` is the small HTTP/1.1 and WebSocket server it runs on, asyncio
streams with h11 and wsproto parsing, and the connection limits. Importing the package
imports neither.
"""
