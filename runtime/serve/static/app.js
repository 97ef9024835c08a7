// UMMAYA citizen page: streams POST /v1/answer (SSE) into the conversation. The answer's parts
// (delta.part, runtime/compose.py Part) are laid out: each result's text in its evidence card (badge,
// service in plain words, a short labelled source link), the place a locate step resolved on one
// line, an emergency's number, what UMMAYA cannot do and where (way out), then the Mock/Live
// boundary and the next step under the cards. Phone numbers are tel: links, web addresses short
// labelled links. A consent dialog retries the turn on grant. No framework, no build step. Every
// server or upstream string goes through clean() and is inserted as text, never as HTML.
"use strict";
(() => {
  const T = {
    ko: {
      title: "UMMAYA · 공공서비스 도우미", tagline: "공공서비스 도우미", skip: "질문 입력으로 건너뛰기",
      intro: "응급실·약국·날씨·대기질·주소·복지·교통 등 공공서비스를 물어보세요. 모든 답에는 실시간(Live)·모의(Mock)·공식 창구 안내(Handoff) 표시와 출처가 붙습니다.",
      conversation: "대화", label: "무엇을 도와드릴까요?", placeholder: "예: 동아대 승학캠퍼스 근처 응급실 알려줘",
      send: "보내기", hint: "Enter로 보내고 Shift+Enter로 줄을 바꿉니다. 응급 상황이면 바로 119에 전화하세요.",
      you: "나", consentTitle: "개인정보 수집·이용 동의", purpose: "목적", items: "수집 항목", retention: "보유 기간",
      refusal: "거부할 권리", law: "개인정보 보호법 제15조·제22조에 따라 동의를 받습니다. 동의하지 않으면 실행하지 않습니다.",
      refuse: "동의하지 않음", grant: "동의하고 계속", langButton: "English", langLabel: "Switch to English",
      waiting: "답변을 받는 중…", calling: "기관에 조회 중: ", done: "답변을 마쳤습니다.", source: "출처",
      asOf: "기준 시각", stopLabel: "결과: ", refused: "동의하지 않아 실행하지 않았습니다.",
      retried: "(동의 후 다시 요청)", consentLead: (t, a) => `'${t}' (${a})을(를) 진행하려면 아래 내용에 동의가 필요합니다.`,
      channel: "공식 창구", steps: "절차", documents: "준비물", deadline: "기한", offline: "방문", phone: "문의",
      count: (n) => `${n}건`, trace: "추적 번호", empty: "질문을 입력해 주세요.",
    },
    en: {
      title: "UMMAYA · Public-service helper", tagline: "Public-service helper", skip: "Skip to the question box",
      intro: "Ask about public services: emergency rooms, pharmacies, weather, air quality, addresses, welfare, transport. Every answer is labelled Live, Mock or Handoff (official channel) and cited.",
      conversation: "Conversation", label: "How can I help?", placeholder: "e.g. Emergency rooms near Dong-A University Seunghak campus",
      send: "Send", hint: "Enter sends, Shift+Enter adds a line. In an emergency call 119 now.",
      you: "You", consentTitle: "Consent to collect and use personal data", purpose: "Purpose", items: "Data collected",
      retention: "Retention", refusal: "Right to refuse",
      law: "Consent is asked under the Personal Information Protection Act, Articles 15 and 22. Nothing runs without it.",
      refuse: "Do not consent", grant: "Consent and continue", langButton: "한국어", langLabel: "한국어로 보기",
      waiting: "Waiting for the answer…", calling: "Asking the agency: ", done: "Answered.", source: "Source",
      asOf: "As of", stopLabel: "Result: ", refused: "Not run: you did not consent.",
      retried: "(asked again after consent)", consentLead: (t, a) => `'${t}' (${a}) needs your consent to the following.`,
      channel: "Official channel", steps: "Steps", documents: "Bring", deadline: "Deadline", offline: "In person", phone: "Phone",
      count: (n) => `${n} result${n === 1 ? "" : "s"}`, trace: "Trace", empty: "Please type a question.",
    },
  };
  // Stop reasons (runtime/events.py) and error codes (runtime/serve/README.md) in plain words.
  const STOP = {
    ko: {
      completed: "답변을 마쳤습니다.", needs_input: "조금 더 알려주셔야 찾을 수 있습니다.",
      no_adapter: "UMMAYA가 할 수 없는 요청입니다. 위의 공식 창구를 이용해 주세요.", invalid_arguments: "요청에서 조회에 필요한 값을 만들지 못했습니다.",
      consent_required: "개인정보 동의가 있어야 진행할 수 있습니다.", permission_denied: "허용되지 않은 작업이라 실행하지 않았습니다.",
      credential_missing: "이 서비스의 실시간 조회가 아직 준비되지 않았습니다.", channel_unavailable: "기관 시스템이 지금 응답하지 않습니다. 잠시 후 다시 시도해 주세요.",
      adapter_error: "기관의 응답을 처리하지 못했습니다. 결과를 추측해서 알려드리지 않습니다.", budget_exhausted: "허용된 단계 안에 답을 만들지 못했습니다.",
      handoff_required: "이 일은 공식 창구에서 직접 진행해야 합니다.", ungrounded: "근거로 확인되지 않는 답이라 보여드리지 않았습니다.",
    },
    en: {
      completed: "Answered.", needs_input: "I need a little more information to look this up.",
      no_adapter: "UMMAYA cannot do this. Please use the official channel above.", invalid_arguments: "Could not build a valid lookup from the request.",
      consent_required: "Your consent is needed to continue.", permission_denied: "This action is not permitted, so it was not run.",
      credential_missing: "Live look-ups for this service are not set up yet.", channel_unavailable: "The agency's system is not responding. Please try again shortly.",
      adapter_error: "The agency's answer could not be processed; no result is guessed.", budget_exhausted: "No answer within the allowed steps.",
      handoff_required: "This must be done through the official channel.", ungrounded: "The answer could not be backed by evidence, so it is not shown.",
    },
  };
  const ERROR = {
    ko: { provider: "답변을 만드는 언어 모델이 지금 응답하지 않습니다.", network: "서버에 연결하지 못했습니다.",
          empty_query: "질문을 입력해 주세요.", query_too_long: "질문이 너무 깁니다 (2,000자 이하).",
          not_ready: "서비스가 아직 준비되지 않았습니다.", other: "요청을 처리하지 못했습니다.",
          session_not_found: "이전 대화가 만료되었습니다. 새 대화로 다시 보내 주세요." },
    en: { provider: "The language model that writes answers is not responding.", network: "Could not reach the server.",
          empty_query: "Please type a question.", query_too_long: "The question is too long (2,000 characters at most).",
          not_ready: "The service is not ready yet.", other: "The request could not be processed.",
          session_not_found: "The earlier conversation has expired. Send the question again to start a new one." },
  };
  const BADGE = { live: "Live · 실시간", mock: "Mock · 모의", handoff: "Handoff · 공식 창구" };

  let lang = "ko";
  let session = null; // issued by the server on the first turn, sent back on every later one
  let busy = false;
  const $ = (id) => document.getElementById(id);
  const t = (key) => T[lang][key];
  const pick = (v) => (v && typeof v === "object" && !Array.isArray(v) ? (v[lang] ?? v.ko ?? v.en) : v);

  function el(tag, attrs = {}, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined) continue;
      if (k === "class") e.className = v; else if (k === "text") e.textContent = plain(v); else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(typeof c === "string" ? plain(c) : c);
    return e;
  }
  // Bidirectional controls make text read in another order than it is stored (U+202E): the
  // server removes them from answers; the page drops them from anything else it shows.
  const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  const plain = (v) => String(v).replace(BIDI, "");
  // Links only to https: a citation or handoff on http:// is shown as text, never as a link.
  const safeUrl = (u) => (typeof u === "string" && /^https:\/\/[^\s]+$/i.test(u) ? u : null);

  function applyLang() {
    document.documentElement.lang = lang;
    document.title = t("title");
    document.querySelectorAll("[data-i18n]").forEach((e) => { const v = t(e.dataset.i18n); if (typeof v === "string") e.textContent = v; });
    document.querySelectorAll("[data-i18n-placeholder]").forEach((e) => { e.placeholder = t(e.dataset.i18nPlaceholder); });
    const b = $("lang");
    b.textContent = t("langButton");
    b.setAttribute("aria-label", t("langLabel"));
    b.setAttribute("lang", lang === "ko" ? "en" : "ko");
    document.querySelectorAll(".stop[data-stop]").forEach(renderStop);
  }

  function renderStop(p) {
    const reason = p.dataset.stop, code = p.dataset.error;
    p.classList.toggle("error", Boolean(code));
    if (code) {
      const words = STOP[lang][code] || ERROR[lang][code] || (code.startsWith("provider_") ? ERROR[lang].provider : ERROR[lang].other);
      p.textContent = `${words} (${code})` + (p.dataset.trace ? ` · ${t("trace")} ${p.dataset.trace}` : "");
    } else {
      p.textContent = t("stopLabel") + (STOP[lang][reason] || reason) + (p.dataset.note ? ` ${t(p.dataset.note)}` : "");
    }
  }

  // -- text: one place where server text enters the page ---------------------------------------
  // Every string from the server or an upstream passes clean() before it is shown (a text
  // sanitiser — bidi controls and the like — belongs here, and only here), then linkify() makes
  // DOM text nodes and links from it; nothing is ever parsed as HTML.
  // Every text the page shows passes here: no bidirectional or invisible formatting (security).
  const clean = (s) => (s === null || s === undefined ? "" : String(s).replace(BIDI, ""));
  const TEL = (n) => `tel:${n.replace(/[^0-9]/g, "")}`;
  // "Label: https://…" (a channel's link), a bare web address, ☎ numbers, and Korean phone formats.
  const LINKS = /([^\s·:()\n][^·:()\n]*?): (https?:\/\/[^\s)·]+)|(https?:\/\/[^\s)·]+)|☎\s?(\d[\d-]{1,13}\d)|(?<![\d-])(0\d{1,2}-\d{3,4}-\d{4}|1\d{3}-\d{4})(?![\d-])/g;
  // Short service numbers (119, 112, 110, 1350 …) are links only in the engine's own emergency and
  // way-out lines, where they are always phone numbers.
  const SHORT = /(?<![\d-])(1\d{2,3})(?![\d-])/g;
  function shortHost(u) { try { return new URL(u).host.replace(/^www\./, ""); } catch { return u; } }
  function link(href, text, external) {
    const a = el("a", { href, text });
    if (external) { a.target = "_blank"; a.rel = "noopener noreferrer"; }
    return a;
  }
  function linkify(raw, shortNumbers = false) {
    const text = clean(raw), frag = document.createDocumentFragment();
    let at = 0;
    const plain = (t) => {
      if (!shortNumbers) { frag.append(document.createTextNode(t)); return; }
      let i = 0;
      for (const m of t.matchAll(SHORT)) {
        frag.append(document.createTextNode(t.slice(i, m.index)), link(TEL(m[1]), m[1], false));
        i = m.index + m[0].length;
      }
      frag.append(document.createTextNode(t.slice(i)));
    };
    for (const m of text.matchAll(LINKS)) {
      plain(text.slice(at, m.index));
      if (m[2] && safeUrl(m[2])) frag.append(link(m[2], m[1], true));
      else if (m[3] && safeUrl(m[3])) frag.append(link(m[3], shortHost(m[3]), true));
      else if (m[4]) frag.append("☎ ", link(TEL(m[4]), m[4], false));
      else if (m[5]) frag.append(link(TEL(m[5]), m[5], false));
      else frag.append(document.createTextNode(m[0]));
      at = m.index + m[0].length;
    }
    plain(text.slice(at));
    return frag;
  }
  // 20261201 → 2026-12-01; an ISO time → 2026-12-01 10:00 (what runtime/compose.py when() writes).
  function when(v) {
    const s = clean(v).trim();
    if (/^\d{8}$/.test(s)) return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6)}`;
    if (/^\d{12}(\d{2})?$/.test(s)) return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)} ${s.slice(8, 10)}:${s.slice(10, 12)}`;
    const m = s.match(/^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})/);
    return m ? `${m[1]} ${m[2]}` : s;
  }

  // -- evidence cards: each result's own text is the answer ---------------------------------------
  const NAME_KEYS = ["name", "place_name", "title", "facility_name", "service_name", "item_name", "drug_name", "station_name", "stop_name", "region_name", "road_address", "address_name"];
  const DETAIL_KEYS = ["address", "road_address", "address_name", "distance_km", "phone", "category", "grade", "status"];
  function itemLine(item) {
    if (!item || typeof item !== "object") return String(item);
    const name = NAME_KEYS.map((k) => item[k]).find((v) => typeof v === "string" && v);
    const rest = DETAIL_KEYS.filter((k) => item[k] !== null && item[k] !== undefined && item[k] !== "" && item[k] !== name)
      .slice(0, 3).map((k) => (k === "distance_km" ? `${item[k]} km` : String(item[k])));
    if (name) return [name, ...rest].join(" · ");
    return Object.entries(item).filter(([, v]) => v !== null && typeof v !== "object").slice(0, 3).map(([k, v]) => `${k}: ${v}`).join(" · ");
  }
  function badge(tier) { return el("span", { class: "badge", "data-tier": tier, text: BADGE[tier] || tier }); }
  // The source in plain words: the agency, and a short labelled link to the data set's page (its
  // official name, with the operation, stays in the evidence and the trace).
  function citeLine(c, freshness) {
    const meta = el("p", { class: "meta" }, `${t("source")}: `);
    const href = safeUrl(c.url);
    const agency = clean(lang === "en" && c.agency_en ? c.agency_en : c.agency || c.title);
    meta.append(href ? link(href, `${agency} · ${shortHost(href)}`, true) : agency);
    if (href) meta.lastChild.setAttribute("data-testid", "citation");
    if (freshness) meta.append(` · ${t("asOf")} ${when(freshness)}`);
    return meta;
  }
  const heading = (text) => clean(text).replace(/^\[[^\]]*\]\s*/, "").trim();
  function evidenceCard(e) {
    const m = e.metadata || {}, c = e.citation || {}, content = e.content || {};
    if (m.tier === "handoff" || m.status === "handoff") return handoffCard(e);
    const agency = clean(lang === "en" && c.agency_en ? c.agency_en : c.agency);
    const card = el("section", { class: "card", "data-testid": "evidence", "data-adapter": m.adapter_id, "data-tier": m.tier },
      badge(m.tier), el("h3", { text: [agency, clean(c.title)].filter(Boolean).join(" · ") }));
    card.append(el("div", { class: "body" }));
    card._items = Array.isArray(content.items) ? content.items : null;
    card._total = content.total_count;
    card.append(citeLine(c, m.freshness));
    return card;
  }
  // A card the engine wrote no text for (a model's prose summarised it): its records, briefly.
  function itemsInto(card) {
    const body = card.querySelector(".body"), items = card._items;
    if (!body || body.textContent || !items || !items.length) return;
    body.append(el("ol", {}, ...items.slice(0, 5).map((i) => el("li", { text: clean(itemLine(i)) }))));
    if (typeof card._total === "number") body.append(el("p", { class: "meta", text: t("count")(card._total) }));
  }
  function handoffCard(e) {
    const h = e.content || {}, c = e.citation || {}, m = e.metadata || {};
    const dl = el("dl");
    const row = (key, value) => { if (value !== null && value !== undefined && value !== "" && !(Array.isArray(value) && !value.length)) dl.append(el("dt", { text: t(key) }), value instanceof Node ? value : el("dd", {}, linkify(String(value)))); };
    const url = safeUrl(h.url);
    const channel = el("dd", {});
    if (url) channel.append(link(url, `${clean(pick(h.channel))} · ${shortHost(url)}`, true));
    else channel.append(clean(pick(h.channel)));
    if (url) channel.lastChild.setAttribute("data-testid", "citation");
    row("channel", channel);
    const steps = pick(h.steps);
    if (Array.isArray(steps) && steps.length) row("steps", el("dd", {}, el("ol", {}, ...steps.map((s) => el("li", {}, linkify(s))))));
    const docs = pick(h.documents);
    row("documents", Array.isArray(docs) ? docs.join(", ") : docs);
    row("deadline", pick(h.deadline));
    row("offline", pick(h.offline));
    if (h.phone) row("phone", el("dd", {}, linkify(h.phone)));
    return el("section", { class: "card handoff", "data-testid": "evidence", "data-kind": "handoff", "data-adapter": m.adapter_id, "data-tier": "handoff" },
      badge("handoff"), el("h3", { text: [clean(c.agency), clean(c.title)].filter(Boolean).join(" · ") }), dl, citeLine(c, null));
  }

  // -- the answer's parts -------------------------------------------------------------------------
  const TAIL = new Set(["boundary", "next"]);
  const BOXED = { emergency: "emergency", way_out: "way-out", limit: "way-out", note: "note-line", located: "located" };
  const SHORT_NUMBERS = new Set(["emergency", "way_out", "limit"]);
  function ensureCard(turn, id) {
    if (turn.cardFor[id]) return turn.cardFor[id];
    const e = turn.evidence[id];
    if (!e) return null;
    const card = evidenceCard(e);
    turn.cardFor[id] = card;
    turn.cards.append(card);
    return card;
  }
  function para(turn, box, kind, id) {
    const last = turn.last;
    if (last && last.kind === kind && last.id === id && !last.done) return last;
    const p = el("p", { class: `part ${BOXED[kind] || ""}`.trim(), "data-part": kind });
    p._raw = "";
    box.append(p);
    turn.last = { kind, id, el: p, done: false };
    return turn.last;
  }
  function write(target, text, shortNumbers) {
    target.el._raw += text;
    target.done = /\n\n$/.test(target.el._raw);
    target.el.replaceChildren(linkify(target.el._raw.replace(/\s+$/, ""), shortNumbers));
  }
  function located(turn, id, text) {
    const e = turn.evidence[id], tier = e && e.metadata ? e.metadata.tier : null;
    const target = para(turn, turn.lead, "located", id);
    target.el._raw += text;
    target.done = /\n\n$/.test(target.el._raw);
    target.el.replaceChildren(...(tier ? [badge(tier), " "] : []), document.createTextNode(heading(target.el._raw)));
  }
  function onDelta(turn, d) {
    const kind = d.part || "prose", id = d.evidence_id || null, text = clean(d.text);
    if (id && (kind === "label" || kind === "evidence" || kind === "source" || kind === "handoff")) {
      const card = ensureCard(turn, id);
      if (card) {
        turn.last = null;
        if (kind === "label") card.querySelector("h3").textContent = heading(text);
        if (kind === "evidence" && !card.classList.contains("handoff")) {
          const body = card.querySelector(".body");
          body._raw = (body._raw || "") + text;
          body.replaceChildren(linkify(body._raw.replace(/\s+$/, "")));
        }
        return;
      }
    }
    if (kind === "located") {
      if (id) turn.located.add(id);
      located(turn, id, text);
      return;
    }
    const target = para(turn, TAIL.has(kind) ? turn.tail : turn.lead, kind, id);
    write(target, text, SHORT_NUMBERS.has(kind));
  }
  function endTurn(turn) {
    // Evidence the answer's parts never placed (a model's framed answer lists it by label only)
    for (const id of Object.keys(turn.evidence)) {
      if (!turn.cardFor[id] && !turn.located.has(id)) ensureCard(turn, id);
    }
    for (const card of Object.values(turn.cardFor)) if (!card.classList.contains("handoff")) itemsInto(card);
  }

  // -- one turn over SSE ------------------------------------------------------------------------
  async function readSSE(resp, on) {
    const ctype = resp.headers.get("content-type") || "";
    if (!ctype.startsWith("text/event-stream") || !resp.body) {
      const body = await resp.json().catch(() => ({}));
      on("error", body.error ? body : { error: { code: "other", message: resp.statusText } });
      return;
    }
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    const dispatch = (block) => {
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (!data.length) return;
      let obj;
      try { obj = JSON.parse(data.join("\n")); } catch { return; }
      on(name, obj);
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true }).replace(/\r\n/g, "\n");
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) { dispatch(buf.slice(0, i)); buf = buf.slice(i + 2); }
    }
    buf += dec.decode();
    if (buf.trim()) dispatch(buf);
  }

  // The question box stays at the bottom of the screen: scrolling a turn into view must stop above
  // it, or the latest answer ends up hidden behind the box on a phone.
  function padForForm() {
    const root = document.documentElement.style;
    root.scrollPaddingBottom = `${$("ask").offsetHeight + 12}px`;
    root.scrollPaddingTop = `${document.querySelector(".top").offsetHeight + 8}px`;
  }

  // A turn that fits between the header and the question box is shown whole (its end in view); a
  // longer one from its start, so the answer is read from its first line, not its tail.
  function showTurn(li) {
    const room = window.innerHeight - $("ask").offsetHeight - document.querySelector(".top").offsetHeight - 20;
    li.scrollIntoView({ block: li.offsetHeight > room ? "start" : "end" });
  }

  function newTurn(query, note) {
    const li = $("turn-tpl").content.firstElementChild.cloneNode(true);
    li.querySelector(".who").textContent = t("you");
    li.querySelector(".q").textContent = query;
    if (note) li.querySelector(".you").append(" ", el("span", { class: "note", "data-i18n": note, text: t(note) }));
    $("log").append(li);
    return li;
  }

  async function ask(query, consents = [], note = null) {
    busy = true;
    $("send").disabled = true;
    const li = newTurn(query, note);
    const reply = li.querySelector(".reply"), stop = li.querySelector(".stop");
    const turn = { lead: li.querySelector(".lead"), cards: li.querySelector(".cards"), tail: li.querySelector(".tail"),
                   evidence: {}, cardFor: {}, located: new Set(), last: null };
    $("status").textContent = t("waiting");
    showTurn(li);
    let consent = null, final = null;
    const body = { query, stream: true };
    if (session) body.session_id = session;
    if (consents.length) body.consents = consents;
    try {
      const resp = await fetch("/v1/answer", { method: "POST", headers: { "Content-Type": "application/json", Accept: "text/event-stream" }, body: JSON.stringify(body) });
      await readSSE(resp, (name, d) => {
        if (name === "metadata" && d.session_id) session = d.session_id;
        else if (name === "delta") onDelta(turn, d);
        else if (name === "evidence") { if (d.metadata && d.metadata.evidence_id) turn.evidence[d.metadata.evidence_id] = d; }
        else if (name === "tool_call") $("status").textContent = t("calling") + d.adapter_id;
        else if (name === "permission" && d.decision === "consent_required") consent = d;
        else if (name === "completed") { final = d; if (d.session_id) session = d.session_id; }
        else if (name === "error") final = d;
      });
    } catch (err) {
      final = { error: { code: "network", message: String(err) } };
    }
    endTurn(turn);
    reply.setAttribute("aria-busy", "false");
    if (final && final.error) {
      if (final.error.code === "session_not_found") session = null; // expired: the next turn starts afresh
      stop.dataset.stop = "error";
      stop.dataset.error = final.error.code || "other";
      if (final.error.trace_id) stop.dataset.trace = final.error.trace_id;
    } else if (final) {
      stop.dataset.stop = final.stop_reason;
    }
    if (stop.dataset.stop) renderStop(stop);
    $("status").textContent = "";
    busy = false;
    $("send").disabled = false;
    showTurn(li);
    if (final && final.stop_reason === "consent_required" && consent && consent.notice) askConsent(query, consent, stop);
    else $("query").focus();
  }

  function askConsent(query, perm, stopEl) {
    const n = perm.notice, dlg = $("consent");
    $("consent-lead").textContent = T[lang].consentLead(pick(n.title), pick(n.agency));
    $("consent-purpose").textContent = pick(n.purpose);
    $("consent-items").textContent = (n.data_items || []).join(", ");
    $("consent-retention").textContent = pick(n.retention);
    $("consent-refusal").textContent = pick(n.refusal);
    dlg.returnValue = "";
    dlg.addEventListener("close", () => {
      if (dlg.returnValue === "grant") {
        ask(query, [perm.adapter_id], "retried");
      } else {
        stopEl.dataset.note = "refused";
        renderStop(stopEl);
        $("query").focus();
      }
    }, { once: true });
    dlg.showModal();
    $("consent-grant").focus();
  }

  function submit(ev) {
    ev.preventDefault();
    if (busy) return;
    const q = $("query").value.trim();
    if (!q) { $("status").textContent = t("empty"); $("query").focus(); return; }
    $("query").value = "";
    ask(q);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("ask").addEventListener("submit", submit);
    $("query").addEventListener("keydown", (e) => {
      // Korean input composes syllables: Enter that ends a composition must not send.
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) { e.preventDefault(); $("ask").requestSubmit(); }
    });
    $("lang").addEventListener("click", () => { lang = lang === "ko" ? "en" : "ko"; applyLang(); padForForm(); });
    window.addEventListener("resize", padForForm);
    applyLang();
    padForForm();
  });
})();
