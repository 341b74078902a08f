// Written for this book (not vendored): point require.js at the ipywidgets HTML manager's folder in
// _static/vendor, so the fonts and modules it loads relative to itself come from this site.
(function () {
  var here = document.currentScript.src;
  var vendor = here.slice(0, here.lastIndexOf("/") + 1);
  require.config({ paths: { "@jupyter-widgets/html-manager/dist": vendor + "html-manager" } });
})();
