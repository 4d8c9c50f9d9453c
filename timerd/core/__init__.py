"""The pure core: rules and time. No asyncio, no gpiozero, no files, no sockets.

Every function here takes `now` (seconds on a monotonic clock) as an argument and never reads a
clock itself, so tests drive it with literal times.
"""
