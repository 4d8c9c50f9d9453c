// The scoreboard page: renders the pushed state every animation frame, running the clock
// locally between pushes. Keys that later features add to the state (score, penalties,
// timeouts, overtime) are shown when present and hidden when not.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const kiosk = new URLSearchParams(location.search).get("kiosk") === "1";
  if (kiosk) {
    $("controls").hidden = true;
    document.body.classList.add("kiosk");
  }

  // Write only what changed: a TV browser on a Pi should not relayout 60 times a second.
  const setText = (el, text) => { if (el.textContent !== text) el.textContent = text; };
  const show = (el, visible) => { if (el.hidden === visible) el.hidden = !visible; };
  const setClass = (el, base, extra) => {
    const name = extra ? `${base} ${extra}` : base;
    if (el.className !== name) el.className = name;
  };

  const describe = (value) => {
    if (value == null) return "";
    if (Array.isArray(value)) return value.map(describe).join(", ");
    if (typeof value === "object") {
      return Object.entries(value).map(([k, v]) => `${k} ${describe(v)}`).join(" · ");
    }
    if (typeof value === "number" && !Number.isInteger(value)) return timerd.shownClock(value);
    return String(value);
  };

  function renderPenalties(penalties) {
    const box = $("penalties");
    const list = Array.isArray(penalties) ? penalties : [];
    show(box, list.length > 0);
    while (box.children.length > list.length) box.lastChild.remove();
    while (box.children.length < list.length) box.append(document.createElement("div"));
    list.forEach((p, i) => {
      const who = [p.side, p.player != null ? `#${p.player}` : ""].filter(Boolean).join(" ");
      const left = typeof p.remaining_s === "number" ? timerd.shownClock(p.remaining_s) : "";
      setText(box.children[i], [who, p.kind, left].filter(Boolean).join("  "));
      setClass(box.children[i], "penalty", p.side);
    });
  }

  // Draw one state, as it stands at this instant.
  function render(s) {
    setText($("profile"), s.profile || "");
    const periods = s.periods || 1;
    show($("period"), periods > 1);
    setText($("period"), `Period ${s.period}/${periods}`);
    show($("overtime"), Boolean(s.overtime));

    const [phase, cls] = timerd.phaseText(s);
    setText($("clock"), timerd.shownClock(s.remaining_s));
    setClass($("clock"), "clock", cls);
    setText($("phase"), phase);
    setClass($("phase"), "phase", cls);

    const score = s.score && typeof s.score === "object" ? s.score : null;
    show($("score"), score !== null);
    if (score) {
      setText($("home"), String(score.home ?? 0));
      setText($("away"), String(score.away ?? 0));
    }
    renderPenalties(s.penalties);
    // With a score and penalties on screen the clock gives up some height, so all fits a TV.
    const full = score !== null || (Array.isArray(s.penalties) && s.penalties.length > 0);
    if (document.body.classList.contains("full") !== full) {
      document.body.classList.toggle("full", full);
    }
    show($("timeouts"), s.timeouts != null);
    setText($("timeouts"), s.timeouts != null ? `Timeouts: ${describe(s.timeouts)}` : "");
    const last = s.last_signal
      ? `Last signal: ${timerd.signalName(s.last_signal)}`
        + (s.last_signal_remaining_s != null
          ? ` at ${timerd.shownClock(s.last_signal_remaining_s)}` : "")
      : "";
    setText($("last-signal"), last);
  }

  let sync = null;
  const frame = () => {
    if (sync) render(timerd.current(sync));
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);

  document.body.addEventListener("animationend", () => document.body.classList.remove("flash"));

  timerd.connect({
    onState: (next) => { sync = next; render(timerd.current(sync)); },
    onEvent: (event) => {
      if (event.type !== "signal") return;
      // A visible flash with every signal: the hall sees what it hears.
      document.body.classList.remove("flash");
      void document.body.offsetWidth; // restart the animation
      document.body.classList.add("flash");
    },
    onLink: (up) => {
      setText($("link"), up ? "live" : "offline – reconnecting…");
      setClass($("link"), "link", up ? "up" : "down");
      document.body.classList.toggle("offline", !up);
    },
  });

  $("toggle").addEventListener("click", async () => {
    if (!timerd.token()) { location.href = "/control"; return; }
    const reply = await timerd.command("toggle");
    setText($("feedback"), reply.ok ? "" : reply.error);
  });
  $("fullscreen").addEventListener("click", () => {
    document.documentElement.requestFullscreen?.();
  });
})();
