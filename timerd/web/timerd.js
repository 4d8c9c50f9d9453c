// Shared by the scoreboard and the control page: how the clock reads, the live state stream,
// and sending commands. Plain script (no build step, no network): served by the daemon.
"use strict";

const timerd = (() => {
  // Round at the sixth decimal first, as timerd/core/display.py does, so float noise such as
  // 9.9999999 does not show as 10.
  const ceilClean = (x) => Math.ceil(Math.round(x * 1e6) / 1e6);

  // The clock as every timerd display shows it (timerd.core.display.shown_clock): whole seconds
  // rounded up, m:ss; in the last 10 s tenths, also rounded up ("9.9").
  function shownClock(remainingS) {
    const s = Math.max(0, remainingS);
    const tenths = ceilClean(s * 10);
    if (tenths > 0 && tenths < 100) {
      return `${Math.floor(tenths / 10)}.${tenths % 10}`;
    }
    const whole = ceilClean(s);
    return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
  }

  // A time that counts up (an interruption's length): whole seconds elapsed, m:ss.
  function elapsedClock(s) {
    const whole = Math.floor(Math.max(0, s));
    return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
  }

  // The state at this instant: the last pushed state run forward locally, so the clock counts
  // smoothly between pushes. `rate` is daemon seconds per real second (timerd run --speed).
  // Every push re-syncs, so the local clock never drifts further than one push interval.
  function current(sync) {
    if (!sync) return null;
    const dt = ((performance.now() - sync.at) / 1000) * sync.rate;
    const s = { ...sync.state };
    if (s.clock_running) {
      s.remaining_s = Math.max(0, s.remaining_s - dt);
      // Penalty clocks run only while the game clock runs (ISBHF minor penalties).
      if (Array.isArray(s.penalties)) {
        s.penalties = s.penalties.map((p) => (typeof p.remaining_s === "number"
          ? { ...p, remaining_s: Math.max(0, p.remaining_s - dt) } : p));
      }
    }
    if (s.phase === "pre_signal" && typeof s.start_in_s === "number") {
      s.start_in_s = Math.max(0, s.start_in_s - dt);
    }
    if (s.phase === "paused" && typeof s.interruption_s === "number") {
      s.interruption_s += dt;
    }
    return s;
  }

  // One line for where the match stands, and a CSS class for its colour.
  function phaseText(s) {
    switch (s.phase) {
      case "idle": return ["Ready", "idle"];
      case "pre_signal":
        return [s.start_in_s == null ? "Start soon" : `Start in ${shownClock(s.start_in_s)}`,
          "pre"];
      case "running":
        return s.remaining_s <= 30 ? ["Last 30 s", "last30"] : ["Running", "running"];
      case "paused":
        return [s.interruption_s == null ? "Paused"
          : `Paused ${elapsedClock(s.interruption_s)}`, "paused"];
      case "finished": return ["Finished", "finished"];
      default: return [String(s.phase), "idle"];
    }
  }

  const SIGNAL_NAMES = {
    pre_signal: "pre-signal", last_30: "last 30 s", period_end: "period end",
  };
  const signalName = (kind) => SIGNAL_NAMES[kind] || String(kind).replaceAll("_", " ");

  // The state stream: calls onState(sync) on every push, onEvent(record) for each event, and
  // onLink(true/false) when the connection comes and goes; reconnects by itself, forever,
  // quickly at first (a daemon restart takes a second or two), then every few seconds.
  function connect({ onState, onEvent = () => {}, onLink = () => {} }) {
    let delayMs = 250;
    const open = () => {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      const ws = new WebSocket(`${scheme}//${location.host}/api/stream`);
      ws.onopen = () => { delayMs = 250; onLink(true); };
      ws.onmessage = (msg) => {
        const data = JSON.parse(msg.data);
        if (data.type === "state") {
          onState({ state: data.state, rate: data.rate || 1, at: performance.now() });
        } else if (data.type === "event") {
          onEvent(data.event);
        }
      };
      ws.onclose = () => {
        onLink(false);
        setTimeout(open, delayMs);
        delayMs = Math.min(delayMs * 2, 3000);
      };
    };
    open();
  }

  const TOKEN_KEY = "timerd.token";
  const token = () => localStorage.getItem(TOKEN_KEY) || "";
  const setToken = (value) => localStorage.setItem(TOKEN_KEY, value.trim());

  // POST /api/command; resolves to the reply ({ok, status} or {ok: false, error}).
  async function command(name, args = []) {
    try {
      const response = await fetch("/api/command", {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token()}` },
        body: JSON.stringify({ command: name, args }),
      });
      const reply = await response.json();
      return { ...reply, http: response.status };
    } catch (err) {
      return { ok: false, error: `timerd unreachable (${err.message})`, http: 0 };
    }
  }

  return {
    shownClock, elapsedClock, current, phaseText, signalName, connect, token, setToken, command,
  };
})();
