"""The outside world: GPIO, the control socket, the event stream, the terminal, ...

Each adapter turns the service's effects into something a person or a tool sees or hears, or
turns what they do into commands. None of them owns match state.
"""
