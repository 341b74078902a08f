// Written for this book (not vendored). The ipywidgets controls bundled in the HTML manager typeset
// widget labels with MathJax 2's API (MathJax.Hub.Queue), but the site runs MathJax 3, which has no
// Hub: every widget with a description threw "Cannot read properties of undefined (reading 'Queue')".
// This gives whichever object is window.MathJax (the configuration first, then MathJax 3 itself) a
// Hub.Queue that forwards the request to MathJax 3's typesetPromise.
(function () {
  var hub = {
    Queue: function (job) {
      var mj = window.MathJax, element = job && job[2];
      if (mj && typeof mj.typesetPromise === "function") {
        mj.typesetPromise(element ? [element] : undefined).catch(function (err) { console.warn(err); });
      }
    }
  };
  var current = window.MathJax;
  function withHub(value) {
    if (value && typeof value === "object" && !value.Hub) {
      Object.defineProperty(value, "Hub", { value: hub, enumerable: false, configurable: true });
    }
    return value;
  }
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) { current = withHub(value); }
  });
  withHub(current);
})();
