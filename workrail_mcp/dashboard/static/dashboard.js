// WorkRail dashboard: live updates without a reload. A container with data-live-url is refreshed
// from that URL (an HTML fragment rendered and escaped by the server) every data-interval ms; the
// server answers 204 while nothing changed. Polling stops once the fragment says it is final.
"use strict";

(function () {
  function openDetails(root) {
    return Array.from(root.querySelectorAll("details[open][id]")).map(function (d) { return d.id; });
  }

  function isFinal(root) {
    var marker = root.querySelector("[data-final]");
    return marker !== null && marker.getAttribute("data-final") === "true";
  }

  function hideFinished() {
    document.querySelectorAll("[data-hide-when-final]").forEach(function (el) { el.hidden = true; });
  }

  function poll(root) {
    var url = root.getAttribute("data-live-url");
    var interval = parseInt(root.getAttribute("data-interval") || "1000", 10);
    var version = root.getAttribute("data-version") || "";
    function tick() {
      var sep = url.indexOf("?") === -1 ? "?" : "&";
      fetch(url + sep + "v=" + encodeURIComponent(version), {
        credentials: "same-origin",
        headers: { "Accept": "text/html" },
      }).then(function (response) {
        var next = response.headers.get("x-version");
        if (response.status === 200) {
          return response.text().then(function (html) {
            var keep = openDetails(root);
            var focused = document.activeElement && root.contains(document.activeElement)
              ? document.activeElement.id : null;
            root.innerHTML = html;
            keep.forEach(function (id) {
              var d = document.getElementById(id);
              if (d) { d.open = true; }
            });
            if (focused) {
              var again = document.getElementById(focused);
              if (again) { again.focus(); }
            }
            if (next) { version = next; }
          });
        }
        if (next) { version = next; }
        return null;
      }).catch(function () { /* the server may be restarting: try again at the next tick */ })
        .then(function () {
          if (isFinal(root)) { hideFinished(); return; }
          window.setTimeout(tick, interval);
        });
    }
    if (isFinal(root)) { hideFinished(); return; }
    window.setTimeout(tick, interval);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-live-url]").forEach(poll);
  });
})();
