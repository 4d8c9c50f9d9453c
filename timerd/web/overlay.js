// The stream overlay (`/overlay`): broadcast graphics for a streaming program's browser source
// (OBS and the like) on a transparent background. It follows the scoreboard's stream and
// sends nothing. Three parts, one at a time: before the start a lower third (the names, the
// table, the round, the countdown); in play the score bug (names, goals, clock, period, and
// tags for what is on: paused, overtime, shootout, power play, penalties, a timeout); at the
// end the result card (the final score, the winner, how it ended). A counted goal plays a
// short animation on the bug. URL parameters (docs/api.md, "The stream overlay"): `layout`,
// `corner`, `scale`, `names`, `home`, `away`, `lang`.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const { t } = timerd;
  const SIDES = ["home", "away"];
  const isNumber = (x) => typeof x === "number" && Number.isFinite(x);

  // -- URL parameters (timerd.overlayFrame: `corner`, `scale`; each bad value falls back) --

  const frame = timerd.overlayFrame();
  const options = {
    layout: timerd.urlOption("layout", "box", (x) => (["box", "bar"].includes(x) ? x : undefined)),
    names: timerd.urlOption("names", "full",
      (x) => (["full", "short"].includes(x) ? x : undefined)),
    given: { home: frame.params.get("home") || "", away: frame.params.get("away") || "" },
  };
  document.body.classList.add(`layout-${options.layout}`);

  // -- names -------------------------------------------------------------------------------

  // A short name for the bug: the name's first word that is not a club's prefix of up to
  // three capitals (HC, HK, ŠD), its first three letters in capitals ("HC Olimpija
  // Ljubljana": OLI). `home=`/`away=` in the URL name a side as the streamer wants.
  function shortName(name) {
    const words = name.split(/\s+/).filter(Boolean);
    const word = words.find((w) => !(w.length <= 3 && w === w.toUpperCase())) || words[0] || "";
    return word.slice(0, 3).toUpperCase();
  }
  function bugName(side, teams) {
    if (options.given[side]) return options.given[side];
    const name = timerd.sideName(side, teams);
    return options.names === "short" && teams?.[side] ? shortName(name) : name;
  }

  // Write only what changed: the bug is redrawn every animation frame.
  const setText = (el, text) => { if (el.textContent !== text) el.textContent = text; };
  const show = (el, visible) => { if (el.hidden === visible) el.hidden = !visible; };

  // -- what is on: the bug's tags, one function per part of the state ----------------------
  // Each returns tags [className, text]; the bug shows them in this order.

  // The phase, when it is not plain play: paused (ITHF 10.1; a net-time clock stopped at a
  // whistle is play, not a pause), the intermission, the break before overtime, the
  // shootout (ISBHF 414b), the last 30 s (ITHF 4.4).
  function phaseTags(s) {
    if (s.phase === "paused" && s.interruption_s != null && !timerd.stopClock(s)) {
      return [["tag paused", t("phase.paused")]];
    }
    if (s.phase === "break") {
      return [["tag break", t(s.break_kind === "intermission" && !s.overtime
        ? "phase.intermission" : "phase.break")]];
    }
    if (s.phase === "shootout") return [["tag shootout", t("phase.shootout")]];
    if (s.phase === "running" && !s.count_up && s.remaining_s <= 30) {
      return [["tag last30", t("phase.last30")]];
    }
    return [];
  }

  // ISBHF 412: a running timeout ("Timeout HC Košice 0:23").
  function timeoutTags(s) {
    const running = timerd.runningTimeout(s);
    return running ? [[`tag timeout ${running[0]}`, running[1]]] : [];
  }

  // ISBHF part 4: the power play (the side with fewer players short, until the first of
  // the other side's short-handed penalties ends), then each running penalty by its player.
  function penaltyTags(s) {
    const penalties = Array.isArray(s.penalties) ? s.penalties.filter((p) => p && p.running) : [];
    const short = Object.fromEntries(SIDES.map((side) => [side, penalties.filter(
      (p) => p.side === side && p.short_handed && isNumber(p.remaining_s))]));
    const tags = [];
    if (short.home.length !== short.away.length) {
      const [strong, weak] = short.home.length < short.away.length ? SIDES : [...SIDES].reverse();
      const left = Math.min(...short[weak].map((p) => p.remaining_s));
      tags.push([`tag power ${strong}`, t("overlay.power_play",
        { side: bugName(strong, s.teams), time: timerd.shownClock(left) })]);
    }
    for (const p of penalties) {
      const who = p.player ? `#${p.player}` : timerd.textOr(`kind.${p.kind}`, p.kind);
      tags.push([`tag penalty ${p.side}`, `${who} ${timerd.shownClock(p.remaining_s)}`]);
    }
    return tags;
  }

  // Every other rule module's slice, from its declaration, as the terminal's status line
  // says it (`timerd.brief`: "line change 0:04", a new module's "review 1:00"): the bug
  // draws the timeouts (the pips, the running one's tag) and the penalties itself
  // (tests/test_walls_views.py holds the page to this list).
  const DRAWN = ["timeouts", "penalties"];
  const moduleTags = (s) => timerd.brief(s, DRAWN).map((text) => ["tag module", text]);

  const TAGS = [phaseTags, timeoutTags, penaltyTags, moduleTags];

  // Fill `box` with one span per tag, reusing the spans it has.
  function setTags(box, tags) {
    while (box.children.length > tags.length) box.lastChild.remove();
    while (box.children.length < tags.length) box.append(document.createElement("span"));
    tags.forEach(([cls, text], i) => {
      setText(box.children[i], text);
      if (box.children[i].className !== cls) box.children[i].className = cls;
    });
  }

  // ISBHF 412: a pip for each timeout a team has left, none when the profile has none.
  function setTimeoutPips(el, timeouts) {
    const left = timeouts && typeof timeouts === "object" && isNumber(timeouts.left)
      ? Math.max(0, Math.min(timeouts.left, 3)) : 0;
    setText(el, "▮".repeat(left));
  }

  // The period cell: the overtime, the shootout, or the period when there is more than one.
  function periodText(s) {
    if (s.phase === "shootout") return t("overlay.so");
    if (s.overtime) return t("overlay.ot");
    return (s.periods || 1) > 1 ? t("overlay.period", { n: s.period }) : "";
  }

  // -- the three parts ---------------------------------------------------------------------

  const BEFORE = new Set(["idle", "scheduled", "pre_signal"]);

  function renderBug(s) {
    const score = s.score && typeof s.score === "object" ? s.score : {};
    for (const side of SIDES) {
      setText($(`${side}-name`), bugName(side, s.teams));
      setText($(side), String(score[side] ?? 0));
      setTimeoutPips($(`${side}-tos`), s.timeouts?.[side]);
    }
    // The last 30 s (ITHF 4.4) and a pause in the accent colour, as their tags.
    const alert = phaseTags(s).some(([cls]) => /\b(last30|paused)\b/.test(cls));
    setText($("clock"), timerd.mainClock(s));
    const clockClass = alert ? "bug-clock alert" : "bug-clock";
    if ($("clock").className !== clockClass) $("clock").className = clockClass;
    const period = periodText(s);
    setText($("period"), period);
    show($("period"), period !== "");
    setTags($("tags"), TAGS.flatMap((tags) => tags(s)));
    timerd.fitText(SIDES.map((side) => $(`${side}-name`)));
  }

  function renderThird(s) {
    for (const side of SIDES) setText($(`third-${side}`), timerd.sideName(side, s.teams));
    const [startIn] = s.phase === "idle" ? [""] : timerd.phaseText(s);
    setText($("third-where"), [timerd.whereText(s), startIn].filter(Boolean).join(" · "));
  }

  function renderCard(s) {
    const result = s.result && typeof s.result === "object" ? s.result : {};
    const score = result.score || s.score || {};
    for (const side of SIDES) {
      setText($(`card-${side}-name`), timerd.sideName(side, s.teams));
      setText($(`card-${side}`), String(score[side] ?? 0));
      $(`card-${side}`).parentElement.classList.toggle("winner", result.winner === side);
    }
    // ITHF 4.6-4.8, ISBHF 414b: how it ended, after the word FINAL unless in regular time.
    const how = result.how && result.how !== "regular" ? timerd.textOr(`how.${result.how}`,
      result.how) : "";
    setText($("card-head"), how ? t("overlay.final_how", { how }) : t("overlay.final"));
    setText($("card-winner"), result.winner
      ? t("overlay.wins", { side: timerd.sideName(result.winner, s.teams) }) : t("overlay.draw"));
  }

  function render(s) {
    const part = BEFORE.has(s.phase) ? "third" : s.phase === "finished" ? "card" : "bug";
    show($("third"), part === "third");
    show($("card"), part === "card");
    show($("bug"), part === "bug");
    ({ third: renderThird, card: renderCard, bug: renderBug })[part](s);
    document.body.dataset.part = part;
  }

  // A counted goal: the scorer's row and a GOAL strip in its colour, for a few seconds.
  const GOAL_MS = 3500;
  let goalTimer = null;
  let teams = {};
  function showGoal(event) {
    const bug = $("bug");
    setText($("goal-team"), bugName(event.side, teams));
    $("goal").className = `bug-goal ${event.side}`;
    $("goal").hidden = false;
    bug.classList.remove("goal-home", "goal-away");
    void bug.offsetWidth; // restart the animation
    bug.classList.add(`goal-${event.side}`);
    clearTimeout(goalTimer);
    goalTimer = setTimeout(() => {
      $("goal").hidden = true;
      bug.classList.remove("goal-home", "goal-away");
    }, GOAL_MS);
  }

  timerd.run({
    render,
    onState: (sync) => { teams = sync.state.teams || {}; },
    onEvent: (event) => {
      if (event.type === "goal" && event.counted && SIDES.includes(event.side)) showGoal(event);
    },
    // On a stream an error badge would go on air: the bug dims while the table is away.
    onLink: (up) => {
      document.body.classList.toggle("offline", !up);
      document.body.dataset.link = up ? "up" : "down";
    },
  });
})();
