// The scoreboard page, for a hall TV (`/?kiosk=1`) and spectators' phones: renders the pushed
// state every animation frame, running the clocks locally between pushes. What a profile adds
// to the state (score and the goals' times, overtime, and for ball hockey penalties, timeouts,
// line change, goalie change, shootout; docs/ball-hockey.md) is shown when present and hidden
// when not. It has no
// match controls: spectators get a link to the score desk, which asks for the token.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const { t } = timerd;
  const kiosk = new URLSearchParams(location.search).get("kiosk") === "1";
  if (kiosk) {
    $("controls").hidden = true;
    document.body.classList.add("kiosk");
  }

  // Write only what changed: a TV browser on a Pi should not relayout 60 times a second.
  const setText = (el, text) => { if (el.textContent !== text) el.textContent = text; };
  const show = (el, visible) => { if (el.hidden === visible) el.hidden = !visible; };
  const setClass = (el, base, extra = "") => {
    const name = extra ? `${base} ${extra}` : base;
    if (el.className !== name) el.className = name;
  };

  const SIDES = ["home", "away"];
  // The rule modules' status keys this page draws in places of its own (a rink's board: the
  // teams' boxes with the shootout and the penalties; the timeouts, the ends switched in the
  // header); every other module's slice is shown from its declaration (`timerd.showDisplay`;
  // in the teams' boxes what a module declares for a rink's board, `timerd.onBoard`, under
  // the clock its line of its own, `timerd.banner`). tests/test_walls_views.py holds the
  // page to this list.
  const DRAWN = ["shootout", "penalties", "timeouts", "ends_switched"];
  const isNumber = (x) => typeof x === "number" && Number.isFinite(x);

  // Fill `box` with one div per row, each row [className, text], reusing the divs it has.
  function setRows(box, rows) {
    while (box.children.length > rows.length) box.lastChild.remove();
    while (box.children.length < rows.length) box.append(document.createElement("div"));
    rows.forEach(([cls, text], i) => {
      setText(box.children[i], text);
      setClass(box.children[i], cls);
    });
  }

  // A penalty as a rink's board shows it: the player's number and the time left, then the
  // kind; a waiting penalty (its team already has two players off) is marked and stands still.
  function penaltyRow(p) {
    // Padded with figure spaces (as wide as a digit) so the times line up under each other.
    const who = (p.player != null && p.player !== "" ? `#${p.player}` : "").padEnd(4, "\u2007");
    const left = isNumber(p.remaining_s) ? timerd.shownClock(p.remaining_s) : "";
    const kind = p.running ? timerd.textOr(`kind.${p.kind}`, p.kind) : t("web.penalty_waiting");
    return [p.running ? "penalty" : "penalty waiting", `${who} ${left}  ${kind}`];
  }

  // ISBHF 414b: each attempt as a mark (● scored, ✕ missed) and the goals.
  function shootoutRow(shootout, side) {
    const attempts = shootout.attempts?.[side] ?? [];
    const marks = attempts.map((scored) => (scored ? "●" : "✕")).join(" ");
    const goals = shootout.goals?.[side] ?? attempts.filter(Boolean).length;
    return ["shots", `${t("web.shootout", { goals })}${marks ? `  ${marks}` : ""}`];
  }

  // What each team has on its side of the board: shootout attempts, what the rule modules
  // declare for a rink's board (`timerd.onBoard`: the goalie's dressing time, ISBHF 408),
  // penalties (running first, as the status lists them).
  function sideRows(s, side) {
    const rows = [];
    if (s.shootout && typeof s.shootout === "object") rows.push(shootoutRow(s.shootout, side));
    for (const text of timerd.onBoard(s, side)) rows.push(["module", text]);
    const penalties = Array.isArray(s.penalties) ? s.penalties : [];
    for (const p of penalties) if (p && p.side === side) rows.push(penaltyRow(p));
    return rows;
  }

  // The goals that count for a team (ITHF 6.1, ISBHF 420), each at its match time as a game
  // sheet counts it (net time since the start signal, over every period and overtime) with
  // its scorer's number (ISBHF 421): what a spectator who came late wants to know, in the
  // room under the score. Entries that did not count and awarded goals (a forfeit, ITHF 4.6)
  // are not listed; past GOALS_SHOWN, the last ones after "…". A goal is never cut in two at
  // a line's end (a no-break space inside it).
  const GOALS_SHOWN = 8;
  const countedGoals = (s, side) => (Array.isArray(s.goals) ? s.goals : []).filter((g) => g
    && g.side === side && g.counted && !g.reason && isNumber(g.match_time_s));
  function goalLog(goals, shown) {
    if (goals.length === 0 || shown === 0) return "";
    const times = goals.slice(-shown).map((g) => (timerd.value("clock", g.match_time_s)
      + timerd.value("player", g.scorer)).replace(" ", "\u00a0")).join(" · ");
    return t("web.goal_log", { times: goals.length > shown ? `… ${times}` : times });
  }

  // A side's box: its rows, then its goals, as many as fit above a TV's bottom edge (a rink's
  // penalties take the room first; a phone's page scrolls instead). Fitted again only when
  // what the box holds, where it starts or the screen's size changes, not at every frame:
  // the digits of a running penalty's time are all one width, so its ticking changes nothing.
  const TV = window.matchMedia("(orientation: landscape) and (min-width: 1000px)");
  const fitted = { home: { key: "", shown: GOALS_SHOWN }, away: { key: "", shown: GOALS_SHOWN } };
  function showSide(box, side, rows, goals) {
    const fit = fitted[side];
    const key = [...rows.map(([cls, text]) => `${cls} ${text.replace(/\d/g, "0")}`),
      goals.length, t("web.goal_log", { times: "" }), innerWidth, innerHeight,
      Math.round(box.getBoundingClientRect().top)].join("\n");
    const refit = key !== fit.key;
    if (refit) Object.assign(fit, { key, shown: GOALS_SHOWN });
    for (;;) {
      const log = goalLog(goals, fit.shown);
      setRows(box, log ? [...rows, ["scored", log]] : rows);
      if (!refit || !log || !TV.matches || box.getBoundingClientRect().bottom <= innerHeight) return;
      fit.shown -= 1;
    }
  }

  // ISBHF 412: a running timeout as "Timeout Away 0:23", and which teams have one left.
  function renderTimeouts(s) {
    const has = s.timeouts != null && typeof s.timeouts === "object";
    const running = has ? timerd.runningTimeout(s) : null;
    show($("timeout"), running !== null);
    setText($("timeout"), running ? running[1] : "");
    setClass($("timeout"), "timeout", running ? running[0] : "");
    // ISBHF 412: timeouts are for regular time and overtime, not a shootout or after the end.
    show($("timeouts-left"), has && !["shootout", "finished"].includes(s.phase));
    if (!has) return;
    const name = (side) => timerd.sideName(side, s.teams);
    const left = Object.entries(s.timeouts).filter(([, x]) => x && typeof x === "object"
      && x.left > 0).map(([side, x]) => (x.left > 1 ? `${name(side)} ${x.left}` : name(side)));
    setText($("timeouts-left"), left.length
      ? t("web.timeouts_left", { sides: left.join(" · ") }) : t("web.no_timeouts"));
  }

  // What the rule modules show in a line of their own (`timerd.banner`: the line change,
  // ISBHF 404b: visitors 5 s, home 5 s, 5 s to line up).
  function renderBanner(s) {
    const text = timerd.banner(s).join(" · ");
    show($("line-change"), text !== "");
    setText($("line-change"), text);
  }

  // The header: the profile's title, in hall mode the table and the round, the period.
  function renderHeader(s) {
    setText($("title"), timerd.profileTitle(s.profile));
    const where = timerd.whereText(s);
    show($("where"), where !== "");
    setText($("where"), where);
    const periods = s.periods || 1;
    // In overtime the period count goes past `periods`: the header says "Overtime" instead.
    show($("period"), periods > 1 && !s.overtime);
    setText($("period"), t("web.period", { n: s.period, of: periods }));
    show($("overtime"), Boolean(s.overtime));
    show($("ends"), Boolean(s.ends_switched)); // ISBHF 401
    document.title = `${timerd.profileTitle(s.profile)} – ${t("web.title")}`;
  }

  // Draw one state, as it stands at this instant.
  function render(s) {
    renderHeader(s);
    const [phase, cls] = timerd.phaseText(s);
    setText($("clock"), timerd.mainClock(s));
    setClass($("clock"), "clock", cls);
    setText($("phase"), phase);
    setClass($("phase"), "phase", cls);

    const score = s.score && typeof s.score === "object" ? s.score : null;
    show($("score"), score !== null);
    if (score) {
      for (const side of SIDES) {
        setText($(side), String(score[side] ?? 0));
        setText($(`${side}-name`), timerd.sideName(side, s.teams));
      }
      timerd.fitText(SIDES.map((side) => $(`${side}-name`))); // shrunk before it is cut
    }
    renderTimeouts(s);
    renderBanner(s);
    const rows = SIDES.map((side) => sideRows(s, side));
    const goals = SIDES.map((side) => countedGoals(s, side));
    const boxes = rows.some((r) => r.length > 0) || goals.some((g) => g.length > 0);
    show($("boxes"), boxes);
    // With a score and the teams' boxes on screen the clock gives up some height, so all
    // fits a TV (and keeps at least 40% of it).
    for (const [name, on] of [["full", score !== null], ["rink", boxes]]) {
      if (document.body.classList.contains(name) !== on) document.body.classList.toggle(name, on);
    }
    const last = !s.last_signal ? ""
      : s.last_signal_remaining_s != null
        ? t("web.last_signal_at", { signal: timerd.signalName(s.last_signal),
          time: timerd.shownClock(s.last_signal_remaining_s) })
        : t("web.last_signal", { signal: timerd.signalName(s.last_signal) });
    setText($("last-signal"), last);
    timerd.showDisplay(s, $("last-signal").parentElement, DRAWN, ["board", "banner"]);
    // Last, with all else in place: each side's box, its goals fitted to the room left.
    SIDES.forEach((side, i) => showSide($(`${side}-box`), side, rows[i], goals[i]));
  }

  // Hall mode: the round's other tables along the bottom of the TV, as the hall board's round
  // on stream shows them (`timerd hall board`, its /overlay), with `?board=http://desk:8090`.
  const board = timerd.urlOption("board", "", (x) => {
    try {
      const url = new URL(x);
      return ["http:", "https:"].includes(url.protocol) ? url.origin : undefined;
    } catch { return undefined; }
  });
  if (board) {
    const round = document.createElement("iframe");
    const lang = new URLSearchParams(location.search).get("lang");
    round.id = "round";
    round.className = "round-frame";
    round.title = "round";
    round.src = `${board}/overlay?layout=ticker&edge=bottom&scale=1.6${lang ? `&lang=${lang}` : ""}`;
    document.body.append(round);
    document.body.classList.add("with-round");
  }

  document.body.addEventListener("animationend", (e) => {
    if (e.target === document.body) document.body.classList.remove("flash");
  });

  timerd.languageSwitch($("language"));
  $("fullscreen").addEventListener("click", () => {
    document.documentElement.requestFullscreen?.();
  });

  timerd.run({
    render,
    onEvent: (event) => {
      if (event.type === "goal" && !event.counted) timerd.showNoGoal($("no-goal"), event);
      if (event.type !== "signal") return;
      // A visible flash with every signal: the hall sees what it hears.
      document.body.classList.remove("flash");
      void document.body.offsetWidth; // restart the animation
      document.body.classList.add("flash");
    },
    onLink: (up) => {
      timerd.showLink($("link"), up);
      document.body.classList.toggle("offline", !up);
    },
  });
})();
