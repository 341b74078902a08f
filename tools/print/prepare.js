// The single-page book made into a printed book's pages (tools/print_book.py runs this in Chromium after
// MathJax and before printing; tools/print/pdf.css styles what it adds).
// arguments[0]: {title, authors, version, date, licence, site, docs: [{doc, part, url}] in _toc.yml's order,
// wording: tools/print/web_wording.json}.
// Adds a title page and a contents (each entry a link, its page number filled in by the second printing),
// an index of the glossary's terms at the end (its page numbers filled in the same way),
// gives each chapter a named page whose running head is its title, turns the web page's controls into
// print (worked solutions open under a label; folded code cells' buttons, progress bars and drop-downs
// gone), names the site's address wherever the text says "the book's website", and marks the code
// blocks short enough to move whole. Returns what it did, for the print report.
const meta = arguments[0];
const article = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
const el = (tag, attrs = {}, text = null) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== null) e.textContent = text;
  return e;
};
const headingText = (h) => {
  const c = h.cloneNode(true);
  c.querySelectorAll('.headerlink').forEach((a) => a.remove());
  return c.textContent.replace(/\s+/g, ' ').trim();
};
const report = {chapters: [], missing: [], removed: {}, website_links: 0, kept_whole: 0};
const count = (what, n = 1) => { report.removed[what] = (report.removed[what] || 0) + n; };

// --- chapters: a named page each (a forced page break, and the running head of its pages) ------------
const style = el('style', {id: 'book-print-pages'});
let rules = '';
const quote = (s) => '"' + s.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
meta.docs.forEach((d, i) => {
  const anchor = document.getElementById('document-' + d.doc);
  let sec = anchor ? anchor.nextElementSibling : article.querySelector('section');
  while (sec && sec.tagName !== 'SECTION') sec = sec.nextElementSibling;
  const top = sec && sec.querySelector('h1, h2');
  if (!top) { report.missing.push(d.doc); return; }
  // Sphinx's single page nests every document under the home page's heading (a chapter's title is an
  // h2, its sections h3...): one level up, so that chapters are the outline's first level
  if (top.tagName === 'H2') {
    for (const h of Array.from(sec.querySelectorAll('h2, h3, h4, h5, h6'))) {
      const up = document.createElement('h' + (Number(h.tagName[1]) - 1));
      for (const a of h.attributes) up.setAttribute(a.name, a.value);
      up.append(...h.childNodes);
      h.replaceWith(up);
    }
  }
  const title = headingText(sec.querySelector('h1'));
  const name = 'book-page-' + i;
  // the anchor Sphinx puts before each document goes inside it: left between two chapters, in the
  // home page's named page (the chapters sit inside it), it would print a page of its own
  if (anchor) sec.prepend(anchor);
  sec.classList.add('book-chapter');
  sec.style.page = name;
  rules += `@page ${name} { @top-right { content: ${quote(title)}; font: italic 8.5pt "Liberation Sans", "DejaVu Sans", sans-serif; color: #333; } }\n`;
  report.chapters.push({doc: d.doc, id: sec.id, title, part: d.part, url: d.url});
  // "the book's website": its address, this chapter's page on the published site
  const walker = document.createTreeWalker(sec, NodeFilter.SHOW_TEXT);
  const hits = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.textContent.includes("the book's website") && !n.parentElement.closest('pre, code, a, script, style')) hits.push(n);
  }
  for (const n of hits) {
    const [before, ...rest] = n.textContent.split("the book's website");
    const frag = document.createDocumentFragment();
    frag.append(before);
    rest.forEach((after) => {
      frag.append("the book's website (");
      frag.append(el('a', {href: d.url, class: 'reference external'}, d.url));
      frag.append(')' + after);
      report.website_links += 1;
    });
    n.replaceWith(frag);
  }
});
style.textContent = rules;
document.head.append(style);

// --- the web page's controls -------------------------------------------------------------------------
// folded code cells: on the site a button shows their code; the printed book leaves the code out (it is
// setup or a check, hidden on the site for that reason) and keeps the cell's output
document.querySelectorAll('details.hide.above-input, details.above-input').forEach((d) => { d.remove(); count('folded code cells'); });
// other folds (a cell's long output, a model answer) print open; a worked solution under a label
document.querySelectorAll('details').forEach((d) => {
  d.open = true;
  const summary = d.querySelector(':scope > summary');
  if (d.classList.contains('exercise-solution')) {
    const label = el('p', {class: 'book-solution-label'}, 'Worked solution');
    (summary || d.firstChild).after(label);
  }
  if (summary) count('fold buttons');  // hidden by pdf.css (a <details> without one shows "Details")
});
// progress bars (tqdm) printed as text: a line like " 37%|###7      | 37/100 [00:01<00:02, ...]"
const bar = /^\s*(\w[^\n|]*: )?\s*\d{1,3}%\|[^\n]*\|\s*\d+\/\d+/;
document.querySelectorAll('.cell_output .output, .cell_output pre').forEach((o) => {
  if (o.isConnected && bar.test(o.textContent)) {
    const box = o.closest('.output') || o;
    box.remove();
    count('progress bars');
  }
});
// drop-downs and buttons of views that print as pictures
document.querySelectorAll('.cell_output select, .cell_output button, .bd-article .dropdown-toggle, .book-live button').forEach((c) => {
  // a drop-down's label goes with it (bertviz: <span>Layer: <select>)
  const label = c.parentElement;
  const alone = label && label.tagName === 'SPAN' && label.children.length === 1;
  (alone ? label : c).classList.add('book-print-hidden');
  count('controls');
});
// bertviz's views: the line under them (book.css prints it from CSS) with the page's address
for (const view of document.querySelectorAll('[id^="bertviz-"]')) {
  const chapter = view.closest('.book-chapter');
  const doc = chapter && report.chapters.find((c) => c.id === chapter.id);
  if (!doc) continue;
  const note = el('p', {class: 'book-print-note'}, "Interactive view: on the book's website (");
  note.append(el('a', {href: doc.url, class: 'reference external'}, doc.url), '), pointing at a token shows only its lines.');
  view.after(note);
  view.classList.add('book-print-noted');
  report.website_links += 1;
}

// --- sentences written for the website -------------------------------------------------------------
// "Drag the slider...", "hover over a token", "click a thumbnail": a sentence of prose or of a caption
// that names a web control and does not say where it works starts "On the website, " (the rules:
// tools/print/web_wording.json, arguments[0].wording; tools/print_book.py's reword_for_print does the
// same in the ePub)
{
  const rules = meta.wording;
  const spaced = (p) => p.replace(/ /g, '\\s+');  // a space matches a line break of the HTML source
  const web = new RegExp(spaced(rules.web), 'i');
  const already = new RegExp(spaced(rules.already), 'i');
  const notEnd = new RegExp(rules.not_ends, 'i');
  const blocks = new Map();
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const p = n.parentElement;
    if (!p || p.closest('pre, code, script, style, svg, mjx-container, summary, .book-print-hidden')) continue;
    const block = p.closest('.caption-text, p, li, dd, dt, td, th, figcaption');
    if (!block) continue;
    if (!blocks.has(block)) blocks.set(block, []);
    blocks.get(block).push(n);
  }
  report.reworded = 0;
  for (const nodes of blocks.values()) {
    const texts = nodes.map((n) => rules.replace.reduce((t, [re, by]) => t.replace(new RegExp(spaced(re), 'gi'), by), n.textContent));
    const offsets = [];
    let at = 0;
    for (const t of texts) { offsets.push(at); at += t.length; }
    const all = texts.join('');
    const starts = [0];
    for (const m of all.matchAll(/[.!?][\u2019\u201d)\]]*\s+/g)) {
      if (!notEnd.test(all.slice(0, m.index + 1))) starts.push(m.index + m[0].length);
    }
    const found = [];
    starts.forEach((s, i) => {
      const sentence = all.slice(s, i + 1 < starts.length ? starts[i + 1] : all.length);
      if (web.test(sentence) && !already.test(sentence)) found.push(s);
    });
    texts.forEach((t, i) => {
      const here = found.map((s) => s - offsets[i]).filter((s) => s >= 0 && s < t.length).sort((a, b) => b - a);
      for (const local of here) {
        let rest = t.slice(local);
        if (/^(?:A|[A-Z][a-z]+(?:-[a-z]+)?)\b/.test(rest)) rest = rest[0].toLowerCase() + rest.slice(1);
        t = t.slice(0, local) + rules.prefix + rest;
        report.reworded += 1;
      }
      if (t !== nodes[i].textContent) nodes[i].textContent = t;
    });
  }
}

// --- code: short blocks move whole ---------------------------------------------------------------------
document.querySelectorAll('div.highlight, div.cell_output pre').forEach((b) => {
  const lines = b.textContent.split('\n').length;
  if (lines <= 28) { b.classList.add('book-keep'); report.kept_whole += 1; }
});
document.querySelectorAll('.bd-article table').forEach((t) => {
  // a few short rows: whole; rows of long text (chapter 14's four fine-tuning tasks, 60% of a page) break
  // between rows like a long table, rather than leave the page before them half empty
  if (t.rows.length <= 12 && t.textContent.length <= 700) { t.classList.add('book-keep'); report.kept_whole += 1; }
});

// --- the title page and the contents ---------------------------------------------------------------------
const front = el('section', {class: 'book-title-page', id: 'book-title-page'});
front.append(el('div', {class: 'book-title'}, meta.title));
front.append(el('div', {class: 'book-authors'}, meta.authors.join(', ')));
for (const line of [meta.version, meta.date, meta.licence]) front.append(el('p', {}, line));
const site = el('p', {}, 'Read it online, with its live figures: ');
site.append(el('a', {href: meta.site, class: 'reference external'}, meta.site));
front.append(site);
const contents = el('nav', {class: 'book-contents', id: 'book-contents'});
contents.append(el('h1', {}, 'Contents'));
let part = null;
let list = null;
for (const c of report.chapters) {
  if (!list || c.part !== part) {
    if (c.part) contents.append(el('div', {class: 'book-toc-part'}, c.part));
    list = el('ol');
    contents.append(list);
    part = c.part;
  }
  const li = el('li');
  li.append(el('a', {href: '#' + c.id}, c.title));
  li.append(el('span', {class: 'book-toc-dots'}));
  li.append(el('span', {class: 'book-toc-page', 'data-target': c.id}, '000'));
  list.append(li);
}
article.prepend(front, contents);

// --- the index ------------------------------------------------------------------------------------------
// After the last document: the glossary's terms, each name of an entry ("BPE", "byte-pair encoding")
// with the pages where a chapter defines it (a bold <strong>term</strong>, a plural too) or, without
// one, first links to its glossary entry, and the glossary's entry itself. Each place gets an id (the
// glossary's <dt> keeps its own: idx-N for the others) and each number is a link to it, "000" until
// tools/print_book.py's FILL_INDEX puts in the first printing's pages, as for the contents: the index
// is the book's end, so its numbers move no earlier page. Alphabetical, in two columns (pdf.css).
{
  const norm = (s) => s.replace(/\s+/g, ' ').trim().toLowerCase().replace(/[.,:;]$/, '');
  const entries = [];
  const byId = new Map();
  const byName = new Map();
  const glossary = report.chapters.find((c) => c.doc === 'book/glossary');
  const glossarySec = glossary && document.getElementById(glossary.id);
  let entry = null;
  // Sphinx's glossary: an entry is its names' <dt>s (synonyms) and one <dd>
  for (const item of glossarySec ? glossarySec.querySelectorAll('dl.glossary > dt, dl.glossary > dd') : []) {
    if (item.tagName !== 'DT') { entry = null; continue; }
    if (!entry) { entry = {names: [], places: [item]}; entries.push(entry); }
    entry.names.push(headingText(item));
    byId.set(item.id, entry);
    byName.set(norm(headingText(item)), entry);
  }
  const named = (text) => {
    const t = norm(text);
    return byName.get(t) || byName.get(t.replace(/s$/, '')) || byName.get(t.replace(/es$/, ''))
      || byName.get(t.replace(/ies$/, 'y'));
  };
  // a link to a glossary entry: "#term-..." or "book/intro.html#term-..." (the single page's own name)
  const linked = (a) => {
    const href = a.getAttribute('href') || '';
    const at = href.indexOf('#term-');
    if (at < 0 || !/^(|.*intro\.html|print\.html)$/.test(href.slice(0, at))) return undefined;
    return byId.get(decodeURIComponent(href.slice(at + 1)));
  };
  const shown = (e) => e.getClientRects().length && !e.closest('.book-print-hidden, mjx-assistive-mml, summary');
  for (const c of report.chapters.filter((c) => c.doc.startsWith('notebooks/'))) {
    const found = new Map();  // entry: {bold, link}, the first of each in the chapter
    for (const e of document.getElementById(c.id).querySelectorAll('strong, a[href*="#term-"]')) {
      const bold = e.tagName === 'STRONG';
      const hit = bold ? named(e.textContent) : linked(e);
      if (!hit || !shown(e)) continue;
      const f = found.get(hit) || {};
      const kind = bold ? 'bold' : 'link';
      if (!f[kind]) f[kind] = e;
      found.set(hit, f);
    }
    for (const [hit, f] of found) hit.places.push(f.bold || f.link);
  }
  let n = 0;
  const targets = new Set();
  const lines = [];
  for (const e of entries) {
    const ids = e.places.map((p) => p.id || (p.id = 'idx-' + (++n)));
    ids.forEach((id) => targets.add(id));
    for (const name of e.names) lines.push({name, ids});
  }
  lines.sort((a, b) => a.name.localeCompare(b.name, 'en', {sensitivity: 'base'}) || (a.name < b.name ? -1 : 1));
  const index = el('section', {class: 'book-index', id: 'book-index'});
  index.style.page = 'book-index';
  style.textContent += `@page book-index { @top-right { content: "Index"; font: italic 8.5pt "Liberation Sans", "DejaVu Sans", sans-serif; color: #333; } }\n`;
  index.append(el('h1', {}, 'Index'));
  const columns = el('div', {class: 'book-index-entries'});
  let letter = null;
  for (const line of lines) {
    const first = line.name[0].toUpperCase();
    if (first !== letter) { columns.append(el('div', {class: 'book-index-letter'}, first)); letter = first; }
    const p = el('p', {class: 'book-index-entry'});
    p.append(el('span', {class: 'book-index-term'}, line.name), ' ');
    const numbers = el('span', {class: 'book-index-pages', 'data-targets': line.ids.join(' ')});
    line.ids.forEach((id, i) => {
      if (i) numbers.append(', ');
      numbers.append(el('a', {href: '#' + id, class: 'book-index-page'}, '000'));
    });
    p.append(numbers);
    columns.append(p);
  }
  index.append(columns);
  article.append(index);
  report.index = {entries: lines.length, terms: entries.length, targets: Array.from(targets)};
}

// --- nothing wider than the column -------------------------------------------------------------------
// Chromium shrinks every page of the book to fit its widest box (one 970 px head view printed all of it
// at 7 pt): a box wider than the column (a bertviz view, a wide table or equation) is zoomed to fit it.
// Measured in print media at the column's width (pdf.css: A4 less 2 x 24 mm).
article.style.setProperty('width', '162mm', 'important');
const column = article.getBoundingClientRect();
report.zoomed = [];
for (const e of article.querySelectorAll('*')) {
  if (e.closest('mjx-assistive-mml, .book-print-hidden') || !e.getClientRects().length) continue;
  const r = e.getBoundingClientRect();
  const parent = e.parentElement.getBoundingClientRect();
  if (r.right > column.right + 1 && !(parent.right > column.right + 1)) {
    const zoom = (column.right - r.left) / r.width;
    e.style.zoom = zoom.toFixed(3);
    report.zoomed.push(e.tagName + ' ' + Math.round(r.width) + 'px x' + zoom.toFixed(2));
  }
}
// a tall figure (its picture over 90 mm at the column's width) may break between its picture and its
// caption (pdf.css): kept whole, it left the page before it up to 87 % empty
const mm = column.width / 162;
report.tall_figures = 0;
for (const f of article.querySelectorAll('figure')) {
  const img = f.querySelector('img');
  if (img && f.querySelector('figcaption') && img.getBoundingClientRect().height > 90 * mm) {
    f.classList.add('book-tall-figure');
    report.tall_figures += 1;
  }
}
// a tall box (an admonition or an opened fold over 60 mm at the column's width) may break between its
// paragraphs (pdf.css): the theme keeps every admonition whole, which left the page before a long
// "Details" box half empty (chapter 4, print test)
report.tall_boxes = 0;
// (a "Details" dropdown's body is hidden on screen, where this measures: its text counts instead, 1,200
// characters being about 12 lines, 60 mm, of the printed column)
for (const b of article.querySelectorAll('.admonition')) {
  if (b.getBoundingClientRect().height > 60 * mm || b.textContent.length > 1200) {
    b.classList.add('book-tall-box');
    report.tall_boxes += 1;
  }
}
article.style.removeProperty('width');
return report;
