// The page's only script, inline: an HTML tooltip with the raw event for every mark, and
// evidence links that light up their marks. Without it, each mark's SVG <title> is the
// (native) tooltip, so nothing is lost when scripts are off. It never reads the document's
// data as code: text goes in through textContent only.
export const pageScript = `(function () {
  var tip = document.getElementById('tip');
  if (!tip) return;
  var head = tip.querySelector('.tip-head');
  var pre = tip.querySelector('pre');
  // Move each <title> of a mark, band or guide into data-tip: the native tooltip would
  // otherwise show on top of ours.
  var owners = document.querySelectorAll('svg .mark, svg .band, svg .guide');
  for (var i = 0; i < owners.length; i++) {
    var title = owners[i].querySelector(':scope > title');
    if (!title) continue;
    owners[i].setAttribute('data-tip', title.textContent || '');
    title.remove();
  }
  var current = null;
  function place(ev) {
    var pad = 14, w = tip.offsetWidth, h = tip.offsetHeight;
    var x = ev.clientX + pad, y = ev.clientY + pad;
    if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - w - pad);
    if (y + h > window.innerHeight - 4) y = Math.max(4, ev.clientY - h - pad);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function show(owner, ev) {
    var text = owner.getAttribute('data-tip') || '';
    // A close-up mark names its event; the overview's mark holds the event's data.
    var raw = owner.getAttribute('data-raw');
    var source = raw ? document.getElementById(raw) : null;
    if (source && source.getAttribute('data-tip')) text = source.getAttribute('data-tip');
    var nl = text.indexOf('\\n');
    var body = nl < 0 ? '' : text.slice(nl + 1);
    try {
      body = JSON.stringify(JSON.parse(body), null, 2);
    } catch (e) {
      // Not JSON (a band's text, or data cut for size): shown as it is.
    }
    head.textContent = nl < 0 ? text : text.slice(0, nl);
    pre.textContent = body;
    pre.hidden = body === '';
    tip.hidden = false;
    place(ev);
  }
  document.addEventListener('mouseover', function (ev) {
    var t = ev.target;
    var owner = t && t.closest ? t.closest('[data-tip]') : null;
    if (owner === current) return;
    current = owner;
    if (owner) show(owner, ev);
    else tip.hidden = true;
  });
  document.addEventListener('mousemove', function (ev) {
    if (current) place(ev);
  });
  var links = document.querySelectorAll('a[data-mark]');
  for (var j = 0; j < links.length; j++) {
    (function (a) {
      var mark = document.getElementById(a.getAttribute('data-mark'));
      if (!mark) return;
      var on = function () { mark.classList.add('highlight'); };
      var off = function () { mark.classList.remove('highlight'); };
      a.addEventListener('mouseenter', on);
      a.addEventListener('mouseleave', off);
      a.addEventListener('focus', on);
      a.addEventListener('blur', off);
    })(links[j]);
  }
})();`;
