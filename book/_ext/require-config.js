// Written for this book (not vendored): point require.js at the ipywidgets HTML manager's folder in
// _static/vendor, so the fonts and modules it loads relative to itself come from this site.
(function () {
  var here = document.currentScript.src;
  var vendor = here.slice(0, here.lastIndexOf("/") + 1);
  // waitSeconds 0: no load timeout. RequireJS gives up on a module after 7 s by default, and on a
  // slow phone or a busy machine d3 (for bertviz's views) can take longer, leaving an empty view.
  require.config({
    paths: { "@jupyter-widgets/html-manager/dist": vendor + "html-manager" },
    waitSeconds: 0,
  });
})();
