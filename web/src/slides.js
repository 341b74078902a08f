// The book's slide decks (tools/make_slides.py writes them; esbuild bundles this file with reveal.js
// from the npm registry into _static/slides/slides.js). reveal.js runs the deck; MathJax, the site's
// own copy, typesets the equations; the speaker notes hold the chapter's prose.
import Reveal from "reveal.js";
import Notes from "reveal.js/plugin/notes";

const script = document.currentScript;

// A phone lays a page without a viewport tag out 980 px wide and shrinks it; the deck should fill the
// phone's screen instead, which reveal.js then scales its slides to (issue 25).
if (!document.querySelector('meta[name="viewport"]')) {
  const meta = document.createElement("meta");
  meta.name = "viewport";
  meta.content = "width=device-width, initial-scale=1";
  document.head.appendChild(meta);
}

function loadMathJax(src) {
  // MathJax 3 reads its configuration from window.MathJax before it loads.
  window.MathJax = {
    tex: {
      inlineMath: [["$", "$"], ["\\(", "\\)"]],
      displayMath: [["$$", "$$"], ["\\[", "\\]"]],
      processEscapes: true,
    },
    options: { ignoreHtmlClass: "jp-OutputArea|highlight", processHtmlClass: "jp-MarkdownOutput" },
  };
  const tag = document.createElement("script");
  tag.src = src;
  tag.defer = true;
  document.head.appendChild(tag);
}

function backLink(href) {
  // A way back to the chapter from every slide (the deck is a page of the book's site).
  const link = document.createElement("a");
  link.className = "book-slides-back";
  link.href = href;
  link.textContent = "Back to the chapter";
  document.body.appendChild(link);
}

if (script.dataset.mathjax) loadMathJax(script.dataset.mathjax);
if (script.dataset.chapter) backLink(script.dataset.chapter);

Reveal.initialize({
  hash: true,
  controls: true,
  progress: true,
  slideNumber: "c/t",
  transition: "none",
  width: 1280,
  height: 800,
  margin: 0.04,
  plugins: [Notes],
}).then(() => {
  document.body.dataset.slidesReady = "true";
});
window.Reveal = Reveal;
