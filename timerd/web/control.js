// The score desk (`/control`): the clock, the score, the table and the round always in view,
// and one big button per action the daemon's profile has now (GET /api/commands lists only
// those; timerd.core.offered):
// START/PAUSE, a goal per side, FACEOFF and PASSIVE for table hockey (ITHF 5.6, 8.3); scorer
// and assists, penalties, timeouts, the line change and, in a shootout, its attempts for ball
// hockey (ISBHF 420, 412, 404b, 414b). UNDO and RESET take a second tap: a stray touch must
// not throw away a goal or a match; any other button forgives a double tap: its second tap
// within DOUBLE_TAP_MS is ignored and said (two goals 120 ms apart are one goal). Every
// refusal, and a goal that did not count, is shown with its reason. The rarer rulings (names, forfeit, replay...) are under "More". A phone is
// paired by the one-time link of `timerctl desk` (issue 43), or the token is entered once;
// either is kept in this browser (localStorage), never in an address.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const { t } = timerd;
  const SIDES = ["home", "away"];
  // The rule modules' status keys the desk draws in places of its own: the penalties in its
  // box of cancel buttons (a control of the penalties), the running timeout in its head;
  // every other module's slice is shown from its declaration (`timerd.showDisplay`; in its
  // head what a module shows in a line of its own, `timerd.banner`: the line change).
  // tests/test_walls_views.py holds the page to this list.
  const DRAWN = ["penalties", "timeouts"];
  const CONFIRM_MS = 4000; // how long a destructive button stays armed for its second tap
  // A second tap of the same button this soon is a double tap, not a second command: one
  // goal, not two; PAUSE, not pause-and-resume (issue 45 item 4).
  const DOUBLE_TAP_MS = 500;
  // When the scorekeeper last typed or chose something on the desk: a tap after that is a new
  // entry (the next penalty's player), never a double tap of the one before.
  let edited = -Infinity;
  document.addEventListener("input", () => { edited = performance.now(); }, true);

  let table = { commands: [], control: true }; // GET /api/commands
  let loadedFor = null; // the profile the desk was built for
  let now = () => ({}); // the state at this instant, once the stream runs (timerd.run)
  const sideName = (s, side) => timerd.sideName(side, s.teams);
  // Labels and visibility that follow the state (team names, START or PAUSE, a shootout).
  const labels = new Map();
  const shownWhen = new Map();

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // -- replies -------------------------------------------------------------------------------

  function say(text, ok) {
    const reply = $("reply");
    reply.textContent = text;
    reply.className = ok ? "reply ok" : "reply error";
    if (!ok) {
      void reply.offsetWidth; // restart the flash
      reply.classList.add("flashing");
    }
  }

  async function send(command, args, label) {
    const reply = await timerd.command(command, args);
    if (reply.ok) {
      // A goal is always entered, counted or not (ITHF 5.1, 5.6, 10.3): "done" would hide
      // that it did not count, so its verdict is shown instead.
      const goal = command === "goal" ? reply.status?.goals?.at(-1) : null;
      if (goal && !goal.counted) {
        say(t("goal.not_counted", { side: sideName(reply.status, goal.side),
          reason: timerd.reason(goal.reason) }), false);
        timerd.showNoGoal($("no-goal"), goal);
      } else {
        say(t("ctl.done", { what: label }), true);
        return true;
      }
    } else if (reply.http === 401) { // wholly in the page's language, never the HTTP words
      say(t("ctl.need_token"), false);
      showToken(true);
      $("token").focus();
    } else if (reply.http === 403 || reply.http === 429) {
      say(t(reply.http === 403 ? "ctl.control_off" : "ctl.too_many_tries"), false);
    } else {
      // The reason in the page's language when the daemon gave its code (every refusal of
      // the match does), else its English text.
      const why = reply.code ? timerd.said(reply.code, reply.params, now().teams) : reply.error;
      say(t("ctl.refused", { what: label, error: why }), false);
    }
    return false; // said something else than "done"
  }

  // -- pairing and the token -----------------------------------------------------------------

  function showToken(visible) { $("token-form").hidden = !visible; }
  // A link from `timerctl desk` (its QR code) carries a one-time pairing code in the
  // fragment (#code=...), dropped from the address bar at once and exchanged once
  // (POST /api/pair) for this browser's own credential, kept here as the token is. The
  // browser's history keeps the address it opened, code and all: a code is dead after its
  // use or a few minutes, so what the history holds opens nothing (issue 43).
  async function pair(code) {
    await timerd.loadTexts(); // the answer in the page's language
    let reply;
    try {
      const response = await fetch("/api/pair", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ code }) });
      reply = { ...(await response.json()), http: response.status };
    } catch (err) {
      say(t("ctl.unreachable", { error: err.message }), false);
      return;
    }
    if (reply.ok) {
      timerd.setToken(reply.credential);
      showToken(false);
      say(t("ctl.paired"), true);
    } else {
      say(t(reply.http === 429 ? "ctl.too_many_tries"
        : reply.http === 403 ? "ctl.control_off" : "ctl.pair_refused"), false);
      showToken(!timerd.token());
    }
  }
  const code = new URLSearchParams(location.hash.slice(1)).get("code");
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  if (code) pair(code);
  showToken(!timerd.token());
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    timerd.setToken($("token").value);
    $("token").value = ""; // kept in the browser's storage, not in the form
    showToken(false);
    say(t("ctl.token_saved"), true);
  });
  $("token-show").addEventListener("click", () => showToken($("token-form").hidden));

  // -- buttons -------------------------------------------------------------------------------

  // "GOAL Home counted once: tap again after 0.5 s for a second".
  const doubleTap = (label) => t("ctl.double_tap", { what: label, s: DOUBLE_TAP_MS / 1000 });

  // A big button whose label follows the state; `confirm` asks for a second tap. Another
  // button ignores its second tap within DOUBLE_TAP_MS (with nothing entered between) and
  // says so, also once the first tap's "done" comes back (which would otherwise hide it).
  function button(labelOf, action, { cls = "", confirm = false, data = {} } = {}) {
    const b = el("button", `act ${cls}`.trim(), labelOf(now()));
    b.type = "button";
    Object.assign(b.dataset, data);
    if (confirm) b.dataset.confirm = "";
    labels.set(b, labelOf);
    let armed = null;
    let tapped = -Infinity; // when the last tap that sent its command was
    let sent = ""; // its label (PAUSE: the state may have made it RESUME since)
    let twice = false; // a double tap ignored since
    const disarm = () => {
      clearTimeout(armed);
      armed = null;
      b.classList.remove("armed");
      b.style.height = "";
      b.textContent = labelOf(now());
    };
    b.addEventListener("click", () => {
      const label = labelOf(now());
      const at = performance.now();
      if (!confirm && at - tapped < DOUBLE_TAP_MS && edited < tapped) {
        twice = true;
        say(doubleTap(sent), false);
        return;
      }
      if (confirm && armed === null) {
        // The longer "Tap again" text, smaller, in the button's own height: nothing moves.
        b.style.height = `${b.getBoundingClientRect().height}px`;
        b.classList.add("armed");
        b.textContent = t("ctl.confirm", { what: label });
        armed = setTimeout(disarm, CONFIRM_MS);
        return;
      }
      if (armed !== null) disarm();
      [tapped, sent, twice] = [at, label, false];
      Promise.resolve(action(label)).then((done) => {
        if (done && twice) say(doubleTap(label), false);
      });
    });
    return b;
  }

  // An input for an optional number (a player, a scorer); its label is its placeholder.
  function numberInput(key, name) {
    const input = el("input", "number");
    Object.assign(input, { inputMode: "numeric", maxLength: 3, name });
    input.placeholder = t(key);
    input.setAttribute("aria-label", t(key));
    return input;
  }

  const values = (inputs) => inputs.map((i) => i.value.trim()).filter((v) => v !== "");

  // What was entered beside a button's label, so the reply echoes it: "PENALTY Home (minor,
  // #17): done".
  const echoed = (label, details) => (details.length ? `${label} (${details.join(", ")})` : label);
  const numbered = (inputs) => values(inputs).map((v) => `#${v}`);

  // A pair of buttons, one per side: `labelKey` with {side}, sending `command side ...args()`;
  // `echo()` says what else was entered.
  function sidePair(command, labelKey,
    { args = () => [], echo = () => [], after = () => {}, cls = "" } = {}) {
    const row = el("div", `row pair ${cls}`.trim());
    row.append(...SIDES.map((side) => button(
      (s) => t(labelKey, { side: sideName(s, side) }),
      (label) => {
        const sent = send(command, [side, ...args()], echoed(label, echo()));
        after();
        return sent;
      },
      { cls: side, data: { command, side } })));
    return row;
  }

  // ISBHF 420-422: the scorer and up to two assists, optional, for the next goal entered.
  function goalDetails() {
    const box = el("details", "goal-details");
    box.append(el("summary", "", t("ctl.details")));
    const inputs = [numberInput("ctl.scorer", "scorer"), numberInput("ctl.assist", "assist1"),
      numberInput("ctl.assist", "assist2")];
    box.append(el("div", "row inputs"));
    box.lastChild.append(...inputs);
    return [box, inputs];
  }

  // ISBHF: a penalty's kind and player, then the side's button.
  function penaltyRows(usage) {
    const kinds = (usage.args[1] || "").split("|").filter(Boolean);
    const kind = el("select", "kind");
    kind.setAttribute("aria-label", t("ctl.kind"));
    kind.append(...kinds.map((k) => new Option(timerd.textOr(`kind.${k}`, k), k)));
    const player = numberInput("ctl.player", "player");
    const inputs = el("div", "row inputs");
    inputs.append(kind, player);
    const buttons = sidePair("penalty", "ctl.penalty", {
      args: () => [kind.value, ...values([player])],
      echo: () => [timerd.textOr(`kind.${kind.value}`, kind.value), ...numbered([player])],
      after: () => { player.value = ""; } });
    return [inputs, buttons];
  }

  // ISBHF 4xx: the penalties each side serves now, as the scorekeeper manages them: number,
  // player, kind, time left (a waiting one marked, it stands still); each is a button that
  // cancels it, on a second tap (`penalty-cancel side number`). After the desk's buttons, in
  // room kept for two per side, so a penalty given or served moves no button.
  const penaltyText = (p) => [`${p.number}.`, p.player ? `#${p.player}` : "",
    timerd.textOr(`kind.${p.kind}`, p.kind),
    p.running ? timerd.shownClock(p.remaining_s) : t("web.penalty_waiting")]
    .filter(Boolean).join(" ");
  const penaltyButtons = new Map(); // "side number" -> its button
  function penaltyBox() {
    penaltyButtons.clear();
    const box = el("section", "penalty-box");
    box.id = "penalties";
    box.append(...SIDES.map((side) => {
      const column = el("div", `penalty-side ${side}`);
      const head = el("div", "penalty-head");
      labels.set(head, (s) => t("ctl.penalties_of", { side: sideName(s, side) }));
      column.append(head, el("div", "penalty-list"));
      return column;
    }));
    return box;
  }
  const findPenalty = (s, key) => (Array.isArray(s.penalties) ? s.penalties : [])
    .find((q) => q && `${q.side} ${q.number}` === key);
  function renderPenalties(s) {
    const box = $("penalties");
    if (!box) return;
    const present = new Set();
    for (const p of Array.isArray(s.penalties) ? s.penalties : []) {
      const key = `${p.side} ${p.number}`;
      present.add(key);
      if (penaltyButtons.has(key)) continue;
      const b = button((state) => { const q = findPenalty(state, key); return q ? penaltyText(q) : ""; },
        (label) => send("penalty-cancel", [p.side, String(p.number)],
          t("ctl.cancel_penalty", { penalty: label })),
        { confirm: true, cls: `penalty-item ${p.side}`,
          data: { command: "penalty-cancel", side: p.side, number: String(p.number) } });
      b.classList.toggle("waiting", !p.running);
      penaltyButtons.set(key, b);
      box.querySelector(`.penalty-side.${p.side} .penalty-list`).append(b);
    }
    for (const [key, b] of penaltyButtons) {
      if (present.has(key)) {
        b.classList.toggle("waiting", !findPenalty(s, key)?.running);
        continue;
      }
      labels.delete(b);
      b.remove();
      penaltyButtons.delete(key);
    }
  }

  // ISBHF 412: a running timeout, by its team's name, with its time, and what the rule
  // modules show in a line of their own (`timerd.banner`: the line change, ISBHF 404b), in
  // the desk's head (a line kept for them: nothing moves when they come and go).
  // The timeout's time comes first: a long team name is cut ("…") at the line's end on a
  // 360 px phone, and the countdown must stay in view (issue 45 item 4).
  // The line is kept while the desk has a TIMEOUT button or a module of the profile shows a
  // line of its own (`banner`: the line change).
  let timeoutKept = false;
  const situationKept = (s) => timeoutKept || (s.display ?? []).some((entry) => entry.banner);
  function situation(s) {
    const timeout = timerd.runningTimeout(s);
    const side = timeout?.[0];
    return [timeout ? t("ctl.timeout_running", { side: sideName(s, side),
      time: timerd.shownClock(s.timeouts[side].remaining_s) }) : "",
    ...timerd.banner(s)].filter(Boolean).join(" · ");
  }

  // An argument's words on the desk: the command's own (`ctl.arg.correct.number`: a goal's
  // number), the argument's (`ctl.arg.seconds`), or the desk's field of that name
  // (`ctl.scorer`); the raw name only for a command no catalogue knows (a plugin's).
  function argText(command, name, raw) {
    const key = [`ctl.arg.${command}.${name}`, `ctl.arg.${name}`, `ctl.${name}`]
      .find((k) => t(k) !== k);
    return key ? t(key) : raw;
  }

  // A command of "More": its name in words, on its own line, then an input or a side choice
  // per argument (however many, none is squeezed).
  function genericRow({ command, args, confirm }) {
    const row = el("div", "generic");
    const inputs = args.map((arg) => {
      const name = arg.replace(/[?.]+$/, "");
      if (arg === "home|away") {
        const select = el("select");
        select.append(...SIDES.map((side) => new Option(t(`side.${side}`), side)));
        select.setAttribute("aria-label", t("web.side"));
        return select;
      }
      const input = el("input");
      input.placeholder = argText(command, name, arg);
      input.setAttribute("aria-label", input.placeholder);
      return input;
    });
    const label = () => timerd.textOr(`ctl.cmd.${command}`, command);
    row.append(button(label, (what) => send(command, values(inputs), what),
      { confirm, cls: confirm ? "destructive" : "", data: { command } }));
    if (inputs.length) {
      row.append(el("div", "row inputs"));
      row.lastChild.append(...inputs);
    }
    return row;
  }

  // The desk for the commands the profile has: the match's main actions as big buttons, in
  // the order a desk uses them, the rest under "More".
  function buildDesk() {
    labels.clear();
    shownWhen.clear();
    const offered = new Map(table.commands.map((row) => [row.command, row]));
    const used = new Set();
    const take = (name) => { used.add(name); return offered.get(name); };
    const rows = [];
    // Table hockey has the faceoff guard (ITHF 5.6), its goals have no scorers; in ball
    // hockey the sheet names the scorer and the assists (ISBHF 420-422).
    const tableHockey = offered.has("faceoff");
    if (offered.has("toggle")) {
      // A running clock is paused and resumed (ITHF 10.1, 10.2); net time is stopped at the
      // whistle and started at the faceoff (ISBHF 407).
      ["toggle", "start", "pause", "stop"].forEach(take);
      rows.push(button((s) => (s.phase === "running"
        ? t(timerd.stopClock(s) ? "ctl.stop" : "ctl.pause")
        : s.phase === "paused" && s.interruption_s != null && !timerd.stopClock(s)
          ? t("ctl.resume") : t("ctl.start")), (label) => send("toggle", [], label),
      { cls: "main", data: { command: "toggle" } }));
    }
    if (offered.has("goal")) {
      const details = take("goal").args.length > 1 && !tableHockey ? goalDetails() : null;
      const inputs = details ? details[1] : [];
      rows.push(sidePair("goal", "ctl.goal_home", { cls: "goals",
        args: () => values(inputs), echo: () => numbered(inputs), after: () => inputs.forEach((i) => { i.value = ""; }) }));
      if (details) rows.push(details[0]);
    }
    // Ball hockey: the penalty's kind and player, then a button per side (ISBHF 4xx); the
    // timeouts (412).
    if (offered.has("penalty")) rows.push(...penaltyRows(take("penalty")));
    if (offered.has("timeout") && take("timeout")) rows.push(sidePair("timeout", "ctl.timeout"));
    const pair = el("div", "row pair");
    if (offered.has("faceoff")) {
      take("faceoff");
      pair.append(button(() => t("ctl.faceoff"), (label) => send("faceoff", [], label),
        { data: { command: "faceoff" } }));
    }
    if (offered.has("linechange") && take("linechange")) {
      pair.append(button(() => t("ctl.linechange"), (label) => send("linechange", [], label),
        { data: { command: "linechange" } }));
    }
    if (offered.has("undo")) {
      take("undo");
      pair.append(button(() => t("ctl.undo"), (label) => send("undo", [], label),
        { confirm: true, cls: "destructive", data: { command: "undo" } }));
    }
    if (pair.children.length) rows.push(pair);
    if (offered.has("passive") && take("passive")) rows.push(sidePair("passive", "ctl.passive"));
    if (offered.has("shot") && take("shot")) { // ISBHF 414b: only in the shootout
      const shots = el("div", "row shots");
      for (const side of SIDES) {
        for (const [result, key] of [["scored", "ctl.shot_scored"], ["missed", "ctl.shot_missed"]]) {
          shots.append(button((s) => t(key, { side: sideName(s, side) }),
            (label) => send("shot", [side, result], label),
            { cls: side, data: { command: "shot", side, result } }));
        }
      }
      shownWhen.set(shots, (s) => s.phase === "shootout");
      rows.push(shots);
    }
    if (offered.has("reset")) {
      take("reset");
      rows.push(button(() => t("ctl.reset"), (label) => send("reset", [], label),
        { confirm: true, cls: "destructive", data: { command: "reset" } }));
    }
    if (offered.has("penalty-cancel") && take("penalty-cancel")) rows.push(penaltyBox());
    document.body.classList.toggle("rink-desk", offered.has("penalty"));
    timeoutKept = used.has("timeout");
    $("desk").replaceChildren(...rows);
    const rest = table.commands.filter((row) => !used.has(row.command));
    $("more").hidden = rest.length === 0;
    $("more-commands").replaceChildren(...rest.map(genericRow));
  }

  async function loadCommands(profile) {
    loadedFor = profile; // once per profile, however many states come while it loads
    try {
      table = await (await fetch("/api/commands")).json();
      $("control-off").hidden = table.control;
      buildDesk();
    } catch (err) {
      say(t("ctl.cannot_load", { error: err.message }), false);
      loadedFor = null; // the next state tries again
    }
  }

  // -- the head: clock and score, always in view ---------------------------------------------

  function render(s) {
    const [phase, cls] = timerd.phaseText(s);
    $("clock").textContent = timerd.mainClock(s);
    $("clock").className = `mini-clock ${cls}`;
    $("phase").textContent = phase;
    $("phase").className = `phase ${cls}`;
    // With several tables in a hall, the desk says which one it keeps, and the round.
    $("where").textContent = timerd.whereText(s);
    $("where").hidden = $("where").textContent === "";
    for (const side of SIDES) {
      $(side).textContent = String(s.score?.[side] ?? 0);
      $(`${side}-name`).textContent = sideName(s, side);
    }
    for (const [b, labelOf] of labels) {
      const text = labelOf(s);
      if (!b.classList.contains("armed") && b.textContent !== text) b.textContent = text;
    }
    for (const [node, when] of shownWhen) node.hidden = !when(s);
    renderPenalties(s);
    const text = situation(s);
    if ($("situation").textContent !== text) $("situation").textContent = text;
    const hidden = !situationKept(s);
    if ($("situation").hidden !== hidden) $("situation").hidden = hidden;
    timerd.showDisplay(s, $("situation").parentElement, DRAWN, ["banner"]); // the others
    document.title = `${t("web.control_title")} – ${timerd.profileTitle(s.profile)}`;
  }

  timerd.languageSwitch($("language"));
  document.addEventListener("timerd-language", buildDesk);

  now = timerd.run({
    render,
    // A restarted daemon, or the reset that ends a recovered match, may bring another
    // profile, with other commands.
    onState: (next) => { if (next.state.profile !== loadedFor) loadCommands(next.state.profile); },
    onEvent: (event) => {
      if (event.type === "goal" && !event.counted) timerd.showNoGoal($("no-goal"), event);
    },
    onLink: (up) => {
      timerd.showLink($("link"), up);
      if (up) loadedFor = null; // reload the commands with the first state
    },
  });
})();
