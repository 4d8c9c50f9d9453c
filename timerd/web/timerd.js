// Shared by the scoreboard and the control page: how the clock reads, the texts in the chosen
// language (the catalogue, timerd/i18n), the live state stream, and sending commands. Plain script (no build step, no network): served by the daemon.
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

  // A time that counts up (an interruption's length): whole seconds elapsed, m:ss
  // (timerd.core.display.elapsed_clock, rounded at the sixth decimal first as it is).
  function elapsedClock(s) {
    const whole = Math.floor(Math.round(Math.max(0, s) * 1e6) / 1e6);
    return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
  }

  // The state at this instant: the last pushed state run forward locally, so the clocks count
  // smoothly between pushes. `rate` is daemon seconds per real second (timerd run --speed).
  // Every push re-syncs, so a local clock never drifts further than one push interval.
  // Two kinds of time pass: game time only while the match clock runs (the period, a
  // count-up overtime), real time always (the start and break countdowns, an interruption);
  // a rule module's times run as its declaration says (`runOn`: a penalty in game time, a
  // timeout, a line change, a goalie's dressing time in real time).
  function current(sync) {
    if (!sync) return null;
    const dt = ((performance.now() - sync.at) / 1000) * sync.rate;
    const down = (x) => (typeof x === "number" ? Math.max(0, x - dt) : x);
    const s = { ...sync.state };
    if (s.clock_running) {
      s.remaining_s = down(s.remaining_s);
      if (typeof s.overtime_s === "number") s.overtime_s += dt; // ITHF 4.8 counts up
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
    for (const entry of s.display ?? []) {
      if (entry.runs && s[entry.key] != null) s[entry.key] = runOn(entry, s, down);
    }
    return s;
  }

  // A rule module's value with its times run on (`down`) as its entry's `runs` says
  // (core.rule.Shown): each of a part's fields named there counts down in `play` time
  // (only while the match clock runs) or `real` time, while the part's field it needs is
  // set (a waiting penalty stands still until it has a place); the value keeps its shape.
  function runOn(entry, s, down) {
    const runs = Object.entries(entry.runs).filter(([, [time]]) => time === "real"
      || s.clock_running);
    const part = (p) => {
      if (p == null) return p;
      const own = fieldsOf(p); // a mapping itself, else {value: p}
      const fields = { ...own };
      for (const [field, [, needs]] of runs) {
        if (!needs || held(fields[needs])) fields[field] = down(fields[field]);
      }
      return own === p ? fields : fields.value;
    };
    const v = s[entry.key];
    if (entry.kind === "sides") {
      return Object.fromEntries(Object.entries(v).map(([side, p]) => [side, part(p)]));
    }
    if (entry.kind === "entries") return Array.isArray(v) ? v.map(part) : v;
    return part(v);
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

  // -- texts (timerd/i18n, GET /api/i18n) ---------------------------------------------------

  // The catalogues and the language shown. The language: the page's own choice (?lang= or
  // the switch, kept in this browser), else `[ui] language` when the config fixes one, else
  // the browser's languages (Accept-Language, as the daemon read it), else English.
  const LANG_KEY = "timerd.language";
  const i18n = {
    texts: { en: {} }, names: {}, words: {}, browser: null, fixed: "auto", language: "en", shown: false,
  };

  // Once per page, however many ask: every caller waits for the same load.
  let loading = null;
  function loadTexts() {
    loading ??= (async () => {
      for (;;) {
        try {
          const reply = await (await fetch("/api/i18n")).json();
          Object.assign(i18n, reply);
          break;
        } catch {
          await new Promise((done) => { setTimeout(done, 1000); }); // the daemon restarts
        }
      }
      chooseLanguage();
    })();
    return loading;
  }

  const chosen = () => new URLSearchParams(location.search).get("lang")
    || localStorage.getItem(LANG_KEY) || "auto";

  function chooseLanguage(fixed = i18n.fixed) {
    i18n.fixed = fixed || "auto";
    const wanted = [chosen(), i18n.fixed, i18n.browser, "en"];
    const language = wanted.find((code) => code && code !== "auto" && i18n.texts[code]);
    if (i18n.shown && language === i18n.language) return;
    i18n.language = language || "en";
    i18n.shown = true; // the page's texts are in i18n.language
    document.documentElement.lang = i18n.language;
    translatePage();
  }

  function setLanguage(code) {
    if (code === "auto") localStorage.removeItem(LANG_KEY);
    else localStorage.setItem(LANG_KEY, code);
    chooseLanguage();
  }

  // A text of the catalogue with its {placeholders} filled; English when the language lacks
  // the key (the catalogue test keeps that from happening), the key itself when none has it.
  function t(key, values = {}) {
    const text = i18n.texts[i18n.language]?.[key] ?? i18n.texts.en?.[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values
      ? String(values[name]) : whole));
  }

  // The static texts of a page: `data-i18n` (its text), `data-i18n-placeholder`.
  function translatePage() {
    for (const el of document.querySelectorAll("[data-i18n]")) {
      el.textContent = t(el.dataset.i18n);
    }
    for (const el of document.querySelectorAll("[data-i18n-placeholder]")) {
      el.placeholder = t(el.dataset.i18nPlaceholder);
    }
    document.dispatchEvent(new Event("timerd-language"));
  }

  // The language switch: "Automatic" and each language by its own name; a choice is kept in
  // this browser.
  function languageSwitch(select) {
    const fill = () => {
      const options = [["auto", t("web.language_auto")], ...Object.entries(i18n.names)];
      select.replaceChildren(...options.map(([code, name]) => new Option(name, code)));
      select.value = localStorage.getItem(LANG_KEY) || "auto";
    };
    fill();
    document.addEventListener("timerd-language", fill);
    select.addEventListener("change", () => setLanguage(select.value));
  }

  // The connection badge: "live", or "offline – reconnecting…" (`down`) in red. Its key is
  // kept as the element's `data-i18n`, so a later change of language (the state's
  // `[ui] language`, the switch) says it again in the new one, never the page's
  // "connecting…" (issue 45 item 5).
  function showLink(el, up, down = "web.offline") {
    el.dataset.i18n = up ? "web.live" : down;
    el.textContent = t(el.dataset.i18n);
    el.className = up ? "link up" : "link down";
  }

  // A goal that did not count: "NO GOAL - faceoff guard (ITHF 5.6)" in `el`, flashing, for
  // NO_GOAL_MS; the hall and the desk see why the score did not change.
  const NO_GOAL_MS = 6000;
  let noGoalTimer = null;
  function showNoGoal(el, goal) {
    el.textContent = t("goal.no_goal", { reason: reason(goal.reason) });
    el.hidden = false;
    el.classList.remove("flashing");
    void el.offsetWidth; // restart the animation
    el.classList.add("flashing");
    clearTimeout(noGoalTimer);
    noGoalTimer = setTimeout(() => { el.hidden = true; }, NO_GOAL_MS);
  }

  // Shrink the texts of `els` together until each fits its box (the teams' names on the TV,
  // in the score bug: both at one size), from their style's size down to `floor` of it,
  // before an ellipsis or a line clamp cuts one. Each box must not grow with its text (a
  // width set by the layout, and a height too for more than one line). Measured again only
  // when a text, a box's width or the window changed: a TV redraws every frame.
  function fitText(els, floor = 0.55) {
    const key = () => [innerWidth, innerHeight, ...els.map((el) => `${el.clientWidth}`
      + `\n${el.textContent}`)].join("\n");
    if (els[0].dataset.fitted === key()) return;
    for (const el of els) el.style.fontSize = "";
    const full = parseFloat(getComputedStyle(els[0]).fontSize);
    const over = () => els.some((el) => el.scrollWidth > el.clientWidth + 1
      || el.scrollHeight > el.clientHeight + 1);
    for (let size = full; over() && size > full * floor;) {
      size = Math.max(full * floor, size * 0.95);
      for (const el of els) el.style.fontSize = `${size}px`;
    }
    els[0].dataset.fitted = key();
  }

  // A URL parameter of the page, read by `read` (which gives undefined for a value it does
  // not understand), or `fallback` when it is absent or not understood (said in the console:
  // a stream overlay shows no error on air).
  function urlOption(name, fallback, read) {
    const given = new URLSearchParams(location.search).get(name);
    if (given === null || given === "") return fallback;
    const value = read(given);
    if (value !== undefined) return value;
    console.warn(`${name}=${given} is not understood; ${name}=${fallback} instead`);
    return fallback;
  }

  // A stream overlay's frame (/overlay, the hall board's /overlay): `corner` (top-left,
  // top-right, bottom-left, bottom-right, or tl, tr, bl, br) as the body's data-corner, and
  // `scale` (0.25 to 4) as its --scale; both with the URL's parameters returned.
  const CORNERS = { tl: "top-left", tr: "top-right", bl: "bottom-left", br: "bottom-right" };
  function overlayFrame(corner = "top-left") {
    const frame = {
      corner: urlOption("corner", corner,
        (x) => CORNERS[x] || (Object.values(CORNERS).includes(x) ? x : undefined)),
      scale: urlOption("scale", 1, (x) => {
        const n = Number(x);
        return Number.isFinite(n) && n >= 0.25 && n <= 4 ? n : undefined;
      }),
      params: new URLSearchParams(location.search),
    };
    document.body.dataset.corner = frame.corner;
    document.body.style.setProperty("--scale", frame.scale);
    return frame;
  }

  // A side by its team's name when `teams` gives one, else "Home"/"Away" in the language.
  const sideName = (side, teams) => (teams && teams[side]) || t(`side.${side}`);
  // Why a goal did not count, with its rule (ITHF 5.6...).
  const reason = (code) => t(`reason.${code}`);
  // A notice or a refusal reason of the daemon (its catalogue key and values: a reply's
  // `code` and `params`) as a sentence, as timerd.i18n.Messages.notice says it: values that
  // are words of the catalogue (`words`: a side, a penalty kind...) are translated too. A
  // refusal is its reason alone; the page says which button was refused.
  // Numbers are shown as the catalogue's table says (`clock`: seconds as m:ss, `score`:
  // "2:1", `player`: " #17", `shirts`: "5, 9" or "-", `tenths`: "18.0", `thousandths`:
  // "59.982"), as Messages.notice does.
  function said(code, params = {}, teams = null) {
    const values = {};
    for (const [name, v] of Object.entries(params)) values[name] = value(i18n.words[name], v, teams);
    return t(code, values);
  }
  // A value as the catalogue shows a value of `kind` (i18n.WORDS' kinds; none or "text": as
  // it is), as timerd.i18n.Messages.value does: a notice's values and a module's row alike.
  function value(kind, v, teams = null) {
    if (kind === "countdown" && typeof v === "number") return shownClock(v); // seconds left
    if (kind === "player") return v ? ` #${v}` : "";
    if (kind === "shirts") return [].concat(v ?? []).filter((shirt) => shirt).join(", ") || "-";
    if (kind === "score" && v && typeof v === "object") return `${v.home ?? 0}:${v.away ?? 0}`;
    if (kind === "clock" && typeof v === "number") return elapsedClock(v);
    if (kind === "tenths" && typeof v === "number") return v.toFixed(1);
    if (kind === "thousandths" && typeof v === "number") return v.toFixed(3);
    if (typeof v !== "string" || !kind || kind === "text") return v;
    return kind === "side" ? sideName(v, teams) : textOr(`${kind}.${v}`, v);
  }
  // What the profile's rule modules show of themselves (the state's `display`: each {key,
  // kind, label} and, for a value of parts, its `texts` and `fields`), in the page's language,
  // as timerd.i18n.Messages.shown says it for `timerctl status`: `rows`, each [label, value]
  // (a value of parts, its parts' texts joined, in one row when it has a label), and `lines`,
  // the parts of a value without a label, one text each. A new sport's status needs no line
  // in any page (issue 44 item 5). `skip`: the keys a page draws in places of its own;
  // `places`: the places a page shows the entries declared for (`board`: the scoreboard's
  // teams' boxes, `onBoard`; `banner`: a line of its own, `banner`), left out here.
  const PARTS = ["sides", "entries", "entry"]; // i18n.PARTS
  function shown(s, skip = [], places = []) {
    const rows = [];
    const lines = [];
    for (const entry of s?.display ?? []) {
      if (skip.includes(entry.key) || places.some((place) => entry[place])) continue;
      if (!PARTS.includes(entry.kind)) {
        rows.push([label(entry), row(entry, s)]);
        continue;
      }
      const texts = parts(entry, s, entry.texts ?? {}, s.teams);
      if (entry.label === null || entry.label === undefined) lines.push(...texts);
      else if (texts.length) rows.push([label(entry), texts.join(", ")]);
    }
    return { rows, lines };
  }
  // What a short line shows of the rule modules, as Messages.brief says it for the
  // terminal's status line (the stream overlay's tags): each part in its `brief` text, its
  // side as Home/Away, else a row with a label as "label value"; a value with parts and no
  // brief is not on it. `skip` as for `shown`.
  function brief(s, skip = []) {
    return (s?.display ?? []).filter((entry) => !skip.includes(entry.key)).flatMap((entry) => (
      PARTS.includes(entry.kind) ? parts(entry, s, entry.brief ?? {})
        : [`${label(entry)} ${row(entry, s)}`]));
  }
  // A value shown whole, as its kind shows it ("-" when it is null), as Messages.row.
  function row(entry, s) {
    const v = s[entry.key];
    return v === null || v === undefined ? "-" : String(value(entry.kind, v, s.teams));
  }
  // An entry's label: its catalogue key's text, or its text in the page's language (else
  // English), or else its key, as Messages.label.
  const label = (entry) => (typeof entry.label === "string" ? textOr(entry.label, entry.label)
    : entry.label?.[i18n.language] || entry.label?.en || entry.key);
  // Is a part's field set, as Python's truth says (an empty list or mapping is not)?
  const held = (x) => (Array.isArray(x) ? x.length > 0
    : x && typeof x === "object" ? Object.keys(x).length > 0 : Boolean(x));
  // A part by its fields: a mapping's own, else `value` (i18n._fields).
  const fieldsOf = (part) => (part && typeof part === "object" && !Array.isArray(part)
    ? part : { value: part });
  // The parts of a value of parts (`sides`: a part per side, its `side` among its fields, a
  // null one left out; `entries` a list; `entry` one or null), each in the first of `texts`
  // (a catalogue key: the part's field that must be set, "" none) that holds, its
  // placeholders from the entry's `fields` (a part's field and its kind), as Messages.parts;
  // with a `side`, only that side's parts.
  function parts(entry, s, texts, teams = null, side = null) {
    const v = s[entry.key];
    const all = entry.kind === "sides"
      ? Object.entries(v && typeof v === "object" ? v : {}).filter(([, p]) => p != null)
        .map(([at, p]) => ({ ...fieldsOf(p), side: at }))
      : (entry.kind === "entries" ? (Array.isArray(v) ? v : []) : v == null ? [] : [v])
        .map(fieldsOf);
    return all.filter((part) => side === null || part.side === side).flatMap((part) => {
      const key = Object.keys(texts).find((k) => !texts[k] || held(part[texts[k]]));
      if (key === undefined) return [];
      const values = Object.fromEntries(Object.entries(entry.fields ?? {}).map(
        ([name, [field, kind]]) => [name, value(kind, part[field] ?? null, teams)]));
      return [t(key, values)];
    });
  }
  // The parts of the entries declared for a `place` (`board`, `banner`), in its texts, by
  // the teams' names; with a `side`, only that side's.
  const placed = (place, s, side = null) => (s?.display ?? []).filter((entry) => entry[place])
    .flatMap((entry) => parts(entry, s, entry[place], s.teams, side));
  // What a rink's board shows of the rule modules in `side`'s box (the goalie's dressing
  // time, ISBHF 408).
  const onBoard = (s, side) => placed("board", s, side);
  // What the rule modules show in a line of their own: under the scoreboard's clock, in the
  // desk's head (the line change, ISBHF 404b: "Line change: visitors 0:04 (1/3)").
  const banner = (s) => placed("banner", s);
  // `shown` drawn into a box of its own at the end of `parent` (made at the first state): a
  // row is a label and its value, a line spans both; the one helper every page calls, the
  // scoreboard, the desk and the overlay alike (`places`: as for `shown`).
  function showDisplay(s, parent, skip = [], places = []) {
    let box = parent.querySelector(":scope > .module-rows");
    if (!box) {
      box = document.createElement("dl");
      box.className = "module-rows";
      parent.appendChild(box);
    }
    const { rows, lines } = shown(s, skip, places);
    const all = [...rows, ...lines.map((line) => [null, line])];
    box.hidden = all.length === 0;
    const text = all.map(([name, v]) => `${name}\u0000${v}`).join("\u0001");
    if (box.dataset.shown === text) return;
    box.dataset.shown = text;
    box.replaceChildren(...all.flatMap(([name, v]) => {
      const dd = document.createElement("dd");
      dd.textContent = v;
      if (name === null) {
        dd.className = "line";
        return [dd];
      }
      const dt = document.createElement("dt");
      dt.textContent = name;
      dd.dataset.key = name;
      return [dt, dd];
    }));
  }
  // Does the state's profile keep net time (ISBHF 407: the whistle stops the clock), so a
  // stopped clock is not an interruption (ITHF 10.1)? The daemon says so in `clock_rule`.
  const stopClock = (s) => s?.clock_rule === "stop";
  // A signal as it sounds ("BEEP x3", "FINAL"), as timerd.i18n.Messages.signal says it.
  function signalName(kind, beeps = 1) {
    if (kind === "interval") return t("signal.beeps", { n: beeps });
    const name = t(`signal.${kind}`);
    return beeps > 1 ? `${name} x${beeps}` : name;
  }
  // The text of `key`, or `fallback` when no catalogue has it (a value the daemon sent that
  // none names: a custom profile, a custom penalty kind), as Messages.get does.
  const textOr = (key, fallback) => (t(key) === key ? String(fallback ?? "") : t(key));
  // The profile's title ("Table hockey · ITHF"), its name when the catalogue has none.
  const profileTitle = (name) => textOr(`profile.${name}`, name);
  // Which table and round this is ("Table 3 · Round QF 2"): `[table] name` and the round
  // the names came with (hall mode); "" when neither is set.
  const whereText = (s) => [s.table, s.round ? t("web.round", { round: s.round }) : ""]
    .filter(Boolean).join(" · ");

  // ISBHF 412: the running timeout, as [side, "Timeout HC Košice 0:23"] (by its team's
  // name), or null.
  function runningTimeout(s) {
    const timeouts = s.timeouts && typeof s.timeouts === "object" ? s.timeouts : {};
    const running = Object.entries(timeouts).find(([, x]) => x && typeof x === "object"
      && typeof x.remaining_s === "number");
    return running ? [running[0], t("web.timeout_running", { side: sideName(running[0], s.teams),
      time: shownClock(running[1].remaining_s) })] : null;
  }

  // One line for where the match stands, and a CSS class for its look (colour, a blink).
  function phaseText(s) {
    const startIn = s.start_in_s == null ? t("phase.start_soon")
      : t("phase.pre", { time: shownClock(s.start_in_s) });
    switch (s.phase) {
      case "idle": return [t("phase.idle"), "idle"];
      case "scheduled": return [startIn, "pre"]; // hall mode: a start instant is set
      case "pre_signal": return [startIn, "pre"]; // ITHF 4.4: the pre-signal's lead
      case "running":
        if (s.count_up) return [t("phase.golden_goal"), "last30"]; // ITHF 4.8
        return s.remaining_s <= 30 ? [t("phase.last30"), "last30"] : [t("phase.running"), "running"];
      case "paused":
        // No interruption runs: a new period waits for its faceoff (ISBHF 401). Under net
        // time the stop is the whistle's (ISBHF 407), not an interruption (ITHF 10.1): its
        // own words, with the same large label and slow blink.
        return s.interruption_s == null ? [t("phase.idle"), "idle"]
          : [t(stopClock(s) ? "phase.stopped_for" : "phase.paused_for",
            { time: elapsedClock(s.interruption_s) }), "paused"];
      case "break":
        return [s.break_kind === "intermission" && !s.overtime ? t("phase.intermission")
          : t("phase.break"), "break"];
      case "shootout": return [t("phase.shootout"), "last30"];
      case "finished": {
        const winner = s.result?.winner;
        return [winner ? t("phase.won", { side: sideName(winner, s.teams) })
          : t("phase.finished"), "finished"];
      }
      default: return [String(s.phase), "idle"];
    }
  }

  // The state stream: calls onState(sync) on every push, onEvent(record) for each event, and
  // onLink(true/false) when the connection comes and goes; reconnects by itself, forever,
  // quickly at first (a daemon restart takes a second or two), then every few seconds.
  function connect({ onState, onEvent = () => {}, onLink = () => {} }) {
    let delayMs = 250;
    const open = () => {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      // The desk's token rides in the offered subprotocols (a page cannot set a WebSocket's
      // headers): an authenticated stream is never closed or refused for a crowd's.
      const ws = new WebSocket(`${scheme}//${location.host}/api/stream`, streamProtocols());
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

  // A page's life: the texts first, then the state stream, and `render(state)` on every
  // animation frame with the clocks run on to that instant. The language follows each state
  // (`[ui] language` may be fixed); `onState(sync)` sees each push as it comes.
  function run({ render, onState = () => {}, onEvent, onLink }) {
    let sync = null;
    const frame = () => {
      if (sync) render(current(sync));
      requestAnimationFrame(frame);
    };
    loadTexts().then(() => {
      requestAnimationFrame(frame);
      connect({
        onState: (next) => {
          sync = next;
          chooseLanguage(next.state.language);
          // Which timerd runs (issue 17): in the page's footer, on every page that has one.
          const version = document.getElementById("version");
          if (version && next.state.version) {
            version.textContent = t("web.version", { version: next.state.version });
          }
          render(current(sync)); // now, not at the next frame: a goal shows at once
          onState(next);
        },
        onEvent,
        onLink,
      });
    });
    return () => (sync ? current(sync) : {});
  }

  const TOKEN_KEY = "timerd.token";
  const token = () => localStorage.getItem(TOKEN_KEY) || "";
  const setToken = (value) => localStorage.setItem(TOKEN_KEY, value.trim());
  // "timerd", and with a token "timerd.bearer." and the token in unpadded base64url.
  function streamProtocols() {
    if (!token()) return ["timerd"];
    const bytes = new TextEncoder().encode(token());
    const b64 = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_");
    return ["timerd", `timerd.bearer.${b64.replace(/=+$/, "")}`];
  }

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
      return { ok: false, error: t("ctl.unreachable", { error: err.message }), http: 0 };
    }
  }

  return {
    shownClock, elapsedClock, current, mainClock, phaseText, signalName, stopClock, connect,
    token, setToken,
    command, run, i18n, loadTexts, chooseLanguage, languageSwitch, showLink, showNoGoal, t,
    textOr, sideName, reason, said, fitText, urlOption, overlayFrame, value, shown, brief, onBoard,
    banner,
    showDisplay, profileTitle, whereText, runningTimeout,
  };
})();
