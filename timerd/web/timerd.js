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

  // The state at this instant: the last pushed state run forward locally, so the clocks count
  // smoothly between pushes. `rate` is daemon seconds per real second (timerd run --speed).
  // Every push re-syncs, so a local clock never drifts further than one push interval.
  // Two kinds of time pass: game time only while the match clock runs (the period, penalties,
  // a count-up overtime), real time always (the start and break countdowns, an interruption,
  // a timeout, a line change, a goalie's dressing time).
  function current(sync) {
    if (!sync) return null;
    const dt = ((performance.now() - sync.at) / 1000) * sync.rate;
    const down = (x) => (typeof x === "number" ? Math.max(0, x - dt) : x);
    const s = { ...sync.state };
    if (s.clock_running) {
      s.remaining_s = down(s.remaining_s);
      if (typeof s.overtime_s === "number") s.overtime_s += dt; // ITHF 4.8 counts up
      // A penalty is served in game time; a waiting one stands still until it has a place.
      if (Array.isArray(s.penalties)) {
        s.penalties = s.penalties.map((p) => (p && p.running
          ? { ...p, remaining_s: down(p.remaining_s) } : p));
      }
    }
    s.start_in_s = down(s.start_in_s); // only set while a start or a break's end is due
    // The big clock (timerd.core.display.clock_face): a break counts down in real time, the
    // period down and a sudden-death overtime up in game time, a shootout stands.
    const face = s.clock_face;
    if (face && typeof face.value_s === "number") {
      const runs = face.kind === "break" || s.clock_running;
      const value = !runs ? face.value_s
        : face.kind === "count_up" ? face.value_s + dt
          : face.kind === "shootout" ? face.value_s : Math.max(0, face.value_s - dt);
      s.clock_face = { ...face, value_s: value };
    }
    if (s.phase === "paused" && typeof s.interruption_s === "number") {
      s.interruption_s += dt;
    }
    if (s.timeouts && typeof s.timeouts === "object") { // ISBHF 412: in a stoppage
      s.timeouts = Object.fromEntries(Object.entries(s.timeouts).map(([side, t]) => [
        side, t && typeof t === "object" ? { ...t, remaining_s: down(t.remaining_s) } : t]));
    }
    if (s.line_change && typeof s.line_change === "object") { // ISBHF 404b
      s.line_change = { ...s.line_change, remaining_s: down(s.line_change.remaining_s) };
    }
    if (s.goalie_change && typeof s.goalie_change === "object") { // ISBHF 408
      s.goalie_change = Object.fromEntries(
        Object.entries(s.goalie_change).map(([side, left]) => [side, down(left)]));
    }
    return s;
  }

  // What the big clock shows: the period's time left; in a break the break's time left (a
  // rink's clock counts the intermission down, ISBHF 410); in a sudden-death overtime the
  // time played, counting up (ITHF 4.8); in a shootout its goals (ISBHF 414b).
  function mainClock(s) {
    const face = s.clock_face ?? { kind: "countdown", value_s: s.remaining_s };
    if (face.kind === "shootout") return String(face.text ?? "").replace("-", " – ");
    if (face.kind === "count_up") return elapsedClock(face.value_s);
    return shownClock(face.value_s);
  }

  // One line for where the match stands, and a CSS class for its colour.
  function phaseText(s) {
    const startIn = s.start_in_s == null ? "Start soon" : `Start in ${shownClock(s.start_in_s)}`;
    switch (s.phase) {
      case "idle": return ["Ready", "idle"];
      case "scheduled": return [startIn, "pre"]; // hall mode: a start instant is set
      case "pre_signal": return [startIn, "pre"];
      case "running":
        if (s.count_up) return ["Golden goal", "last30"]; // ITHF 4.8: the first goal wins
        return s.remaining_s <= 30 ? ["Last 30 s", "last30"] : ["Running", "running"];
      case "paused":
        // No interruption runs: a new period waits for its faceoff (ISBHF 401).
        return s.interruption_s == null ? ["Ready", "idle"]
          : [`Paused ${elapsedClock(s.interruption_s)}`, "paused"];
      case "break":
        return [s.break_kind === "intermission" && !s.overtime ? "Intermission"
          : "Break before overtime", "break"];
      case "shootout": return ["Shootout", "last30"];
      case "finished": {
        const winner = s.result?.winner;
        return [winner ? `Finished: ${String(winner).toUpperCase()} wins` : "Finished",
          "finished"];
      }
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
    shownClock, elapsedClock, current, mainClock, phaseText, signalName, connect, token, setToken,
    command,
  };
})();
