// Phones, keyboards and screen readers (issue 25): loaded by every page (_config.yml html_js_files).
//
// 1. Scroll cues. On a phone, wide things -- display equations, code cells, tables, heatmaps --
// scroll inside their own box, and a phone's overlay scroll bars do not show it: a MathJax equation cut
// at the screen's edge reads as if it ended there. This script finds every box of the page that scrolls
// sideways and whose content is wider than the box, and marks it: the class "book-scrolls" (book.css
// draws a "scroll sideways" line above it that stays in view) and, if it had none, tabindex 0, so that a
// keyboard reader can scroll it with the arrow keys. It runs when the page loads, when MathJax has typeset,
// when the window is resized, and when the live figures draw.
(function () {
  "use strict";
  var pending = null;

  // A progress bar (tqdm's widgets in a training cell's output) gets no cue: it is not content to
  // read sideways, and the cue's sticky line was drawn over its counts.
  var PROGRESS = ".widget-hprogress, .jupyter-widget-hprogress";

  function scrollsSideways(el) {
    if (el.scrollWidth <= el.clientWidth + 1) return false;
    if (el.querySelector(PROGRESS) || el.closest(PROGRESS)) return false;
    var overflow = getComputedStyle(el).overflowX;
    return overflow === "auto" || overflow === "scroll";
  }

  function mark() {
    pending = null;
    widen();
    var root = document.querySelector("main") || document.body;
    var all = root.getElementsByTagName("*");
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      var wide = el.clientWidth > 0 && scrollsSideways(el);
      if (wide && !el.classList.contains("book-scrolls")) {
        el.classList.add("book-scrolls");
        if (!el.hasAttribute("tabindex")) {
          el.setAttribute("tabindex", "0");
          el.dataset.bookScrollTab = "1";
        }
      } else if (!wide && el.classList.contains("book-scrolls")) {
        el.classList.remove("book-scrolls");
        if (el.dataset.bookScrollTab) {
          el.removeAttribute("tabindex");
          delete el.dataset.bookScrollTab;
        }
      }
    }
    name();
    document.documentElement.dataset.scrollCues = "ready";
  }

  // 2. Names for controls that other packages draw without one (axe-core's rules "aria-input-field-name",
  // "select-name", "label-content-name-mismatch"): the slider handles of ipywidgets (noUiSlider) get
  // their widget's label and the value it shows; bertviz's layer and head selectors their label text;
  // the theme's search button, whose visible text ("Search Ctrl+K") differs from its aria-label, is
  // named by its text.
  function name() {
    document.querySelectorAll(".noUi-handle[role=slider]").forEach(function (h) {
      var box = h.closest(".widget-slider, .widget-hslider, .jupyter-widgets");
      var label = box && box.querySelector(".widget-label");
      var text = label && label.textContent.trim();
      if (!h.getAttribute("aria-label")) h.setAttribute("aria-label", text || "slider");
      var readout = box && box.querySelector(".widget-readout");
      if (readout && readout.textContent.trim()) {
        h.setAttribute("aria-valuetext", readout.textContent.trim());
      }
    });
    // a slider's readout only shows its value: ipywidgets makes it editable, but a SelectionSlider
    // (every slider of lib.viz.interactive) ignores what is typed there, so a reader who typed "15"
    // saw "15" over the figure of sentence 0 (review s39, chapter 16's Fig. 16.2): read-only
    document.querySelectorAll(".widget-readout[contenteditable=true]").forEach(function (r) {
      r.contentEditable = "false";
    });
    document.querySelectorAll("select").forEach(function (s) {
      if (s.getAttribute("aria-label") || s.getAttribute("aria-labelledby") || s.closest("label")) return;
      if (s.id && document.querySelector('label[for="' + s.id + '"]')) return;
      var prev = s.previousSibling;
      var text = prev && prev.textContent ? prev.textContent.replace(/[:\s]+$/, "").trim() : "";
      s.setAttribute("aria-label", text || s.id || s.name || "choice");
    });
    // a control's name must contain the text it shows (WCAG 2.5.3, "label in name"): the theme's and
    // sphinx-togglebutton's buttons say "Search Ctrl+K" or "Show code cell source" but are named
    // "Search" or "Toggle hidden content"; they are named by what they show, the old name after it
    // icons inside a named button are decoration (the theme switch's sun and moon are titled "Light"
    // and "Dark" but the button is named "Color mode")
    // (Font Awesome draws them as <svg role=img> with a <title>, which axe reads as the button's text)
    document.querySelectorAll("button[aria-label] svg").forEach(function (svg) {
      svg.setAttribute("aria-hidden", "true");
      svg.removeAttribute("role");
      svg.removeAttribute("aria-labelledby");
      svg.querySelectorAll("title").forEach(function (t) {
        t.remove();
      });
    });
    // the bibliography's list (sphinxcontrib-bibtex) holds role=doc-biblioentry entries, which a
    // role=list may not contain (axe-core's "aria-required-children"): it is a plain block of entries
    document.querySelectorAll(".citation-list[role=list]").forEach(function (list) {
      list.removeAttribute("role");
    });
    document.querySelectorAll("button[aria-label], summary[aria-label], a[aria-label]").forEach(function (b) {
      var shown = (b.innerText || "").replace(/\s+/g, " ").trim();
      var label = b.getAttribute("aria-label");
      if (!shown || label.toLowerCase().indexOf(shown.toLowerCase()) >= 0) return;
      b.setAttribute("aria-label", shown + " (" + label + ")");
    });
  }

  // 3. Figures on a phone. A figure drawn for the desktop's column (a picture wider than 600 px: 8 to
  // 11 inches at 100 dpi) shrunk to a phone's column of about 330 px shows its labels at 4 to 6 px. Below
  // a 600 px window it is shown at twice the column's width (its own width at most), in a box of its
  // own that scrolls sideways (the cue of 1 above it), so its labels are twice as large; its caption
  // stays in the column. Figures drawn for narrow screens (600 px wide or less) fit and are left alone.
  // tests/site/test_phone.py measures it.
  var PHONE_WINDOW = 600;
  var DRAWN_FOR_DESKTOP = 600;
  function widen() {
    var phone = window.innerWidth <= PHONE_WINDOW;
    var root = document.querySelector("main") || document.body;
    root.querySelectorAll(".cell_output img").forEach(function (img) {
      if (!img.complete || !img.naturalWidth) {
        img.addEventListener("load", soon, { once: true });
        return;
      }
      var box = img.parentElement.classList.contains("book-figure-box") ? img.parentElement : null;
      if (!phone || img.naturalWidth <= DRAWN_FOR_DESKTOP) {
        if (box) {
          img.style.width = "";
          img.style.maxWidth = "";
        }
        return;
      }
      if (!box) {
        box = document.createElement("div");
        box.className = "book-figure-box";
        img.parentNode.insertBefore(box, img);
        box.appendChild(img);
      }
      // the column: the cell's output area (a widget's box grows with what it holds)
      var column = img.closest(".cell_output").clientWidth;
      var shown = Math.min(img.naturalWidth, 2 * column) + "px";
      if (img.style.width !== shown) {
        img.style.maxWidth = "none";
        img.style.width = shown;
      }
    });
  }

  function soon() {
    if (pending === null) pending = setTimeout(mark, 150);
  }

  window.bookScrollCues = mark; // the browser tests call it after changing the window's size
  window.addEventListener("load", function () {
    mark();
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(mark);
    }
    setTimeout(mark, 1500); // widgets and head views drawn after load
    // live figures, widgets, head views and the theme's icons (Font Awesome swaps <i> for <svg>) are
    // drawn after load: look again when the page changes
    new MutationObserver(function () {
      soon();
    }).observe(document.body, { childList: true, subtree: true });
  });
  window.addEventListener("resize", soon);
})();

// 2. The page's contents ("On this page") follow the reading. The theme highlights a heading when it
// crosses the top third of the window, seen by an IntersectionObserver; a jump that carries a heading
// across that band at once (Page Down, a link, a scroll bar dragged) never fires it, and the highlight
// stayed on a section read minutes before (first-reader reviews s17, chapters 1 and 3: "1.6" highlighted
// in the exercises). After each scroll this finds the last heading above the band's foot, as the theme
// means to, and marks its entry and the entries that hold it.
(function () {
  "use strict";
  var frame = null;

  function entries() {
    var links = document.querySelectorAll(".page-toc a.nav-link[href^='#']");
    var out = [];
    for (var i = 0; i < links.length; i++) {
      var id = decodeURIComponent(links[i].getAttribute("href").slice(1));
      var target = id && document.getElementById(id);
      if (!target) continue;
      var heading = target.querySelector("h1, h2, h3, h4, h5, h6") || target;
      out.push({ link: links[i], heading: heading });
    }
    return out;
  }

  function follow() {
    frame = null;
    var list = entries();
    if (!list.length) return;
    var band = window.innerHeight * 0.3;
    var current = null;
    for (var i = 0; i < list.length; i++) {
      if (list[i].heading.getBoundingClientRect().top <= band) current = list[i];
    }
    var shown = [];
    list.forEach(function (e) {
      // the theme's page has the contents twice (the sidebar, and the header's drop-down on narrow screens)
      var on = current !== null && e.heading === current.heading;
      e.link.classList.toggle("active", on);
      if (on) {
        e.link.setAttribute("aria-current", "true");
        shown.push(e.link);
      } else e.link.removeAttribute("aria-current");
    });
    document.querySelectorAll(".page-toc li").forEach(function (li) {
      li.classList.toggle(
        "active",
        shown.some(function (a) {
          return li.contains(a);
        })
      );
    });
  }

  window.bookFollowContents = follow; // the browser tests call it after a jump
  window.addEventListener(
    "scroll",
    function () {
      if (frame === null) frame = requestAnimationFrame(follow);
    },
    { passive: true }
  );
})();
