"""Hall mode (docs/hall.md): every table of a tournament hall on one MQTT broker.

`link` is the table's side (the HallLink adapter: retained state, events, results through an
outbox, the desk's commands); `protocol` is the documented wire format (topics, the result
message's version, the broker client) that the tournament desk reads too. Importing the
package imports neither: a tool that needs the format does not load the adapter.
"""
