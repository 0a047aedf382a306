/* refsens-report's pages, enhanced where a browser runs scripts; every page reads the same without it.

   1. Tables with a header (the appendix's, class "sortable") sort when a column header is clicked, or pressed
      with Enter or Space: each header becomes a button, its <th> carries aria-sort.
   2. A listing page (#browser[data-listing]) whose data script ran (window.refsensListings, see
      browser.BrowserListing) gets the browser: every line, filtered, searched, sorted and paged, each item's
      text with the spans of both sides compared and of the outputs highlighted, side by side. Only the
      visible page is drawn.

   What the record wrote (text, labels, ids, names) is only ever set as text (textContent, never markup), inside
   <bdi> isolates (option labels, which cannot hold elements, between U+2068 and U+2069). Nothing is fetched:
   the data arrives as a script the page loads, which works from file://. */
(function () {
  "use strict";

  // --- small helpers ---------------------------------------------------------------------------------

  function make(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = value;
      else if (name === "className") node.className = value;
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children || []) {
      if (child !== null && child !== undefined) node.appendChild(child);
    }
    return node;
  }

  function isolated(text) {
    return make("bdi", { text: String(text) });
  }

  // a count as formatting.count prints it: thousands separated by commas
  function count(value) {
    return Number.isInteger(value) ? String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",") : String(value);
  }

  function plural(value, one, many) {
    return count(value) + " " + (value === 1 ? one : many);
  }

  // the number a printed cell starts with: '+1.23\n[−0.40, 2.10]', '1,234', '12.5%', '<0.01' (just under
  // 0.01); NaN for '—' and text
  function numberIn(text) {
    const found = /[-\u2212+]?\d[\d,]*(?:\.\d+)?/.exec(text);
    if (!found) return NaN;
    const value = parseFloat(found[0].replace("\u2212", "-").replace(/,/g, ""));
    return text.trim().startsWith("<") ? value - 1e-12 : value;
  }

  function compareText(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
  }

  // Make a header cell a sort button; onSort(direction) gets 1 (ascending) or -1 (descending).
  function sortHeader(th, onSort) {
    const button = make("button", { type: "button", className: "sort" });
    while (th.firstChild) button.appendChild(th.firstChild);
    th.appendChild(button);
    button.addEventListener("click", function () {
      const direction = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
      for (const other of th.parentNode.children) other.removeAttribute("aria-sort");
      th.setAttribute("aria-sort", direction);
      onSort(direction === "ascending" ? 1 : -1);
    });
    return button;
  }

  // --- 1. sortable tables ----------------------------------------------------------------------------

  function sortableTable(table) {
    const head = table.tHead;
    if (!head || !head.rows.length || !table.tBodies.length) return;
    const header = head.rows[head.rows.length - 1];
    const bodies = Array.from(table.tBodies);
    const rows = bodies.flatMap(function (body) { return Array.from(body.rows); });
    // a label repeated from the row above is blank on the page; it sorts as that label
    const above = [];
    const keys = rows.map(function (row) {
      return Array.from(row.cells).map(function (cell, column) {
        if (cell.classList.contains("repeat")) return above[column] || "";
        above[column] = cell.textContent.trim();
        return above[column];
      });
    });
    let grouped = true;
    Array.from(header.cells).forEach(function (th, column) {
      const numeric = th.classList.contains("num");
      sortHeader(th, function (direction) {
        if (grouped) ungroup();
        const order = rows.map(function (_, index) { return index; });
        order.sort(function (a, b) {
          const x = keys[a][column] || "", y = keys[b][column] || "";
          let result;
          if (numeric) {
            const p = numberIn(x), q = numberIn(y);
            if (Number.isNaN(p) || Number.isNaN(q)) {  // undefined values last, whichever the direction
              result = Number.isNaN(p) - Number.isNaN(q);
              return result || a - b;
            }
            result = (p - q) * direction;
          } else {
            result = x.localeCompare(y, undefined, { numeric: true }) * direction;
          }
          return result || a - b;
        });
        for (const index of order) bodies[0].appendChild(rows[index]);
      });
    });

    // once sorted, rows no longer share their group: one body, and every repeated label printed
    function ungroup() {
      grouped = false;
      rows.forEach(function (row, index) {
        row.classList.remove("group-start");
        Array.from(row.cells).forEach(function (cell, column) {
          if (!cell.classList.contains("repeat")) return;
          const label = make("th", { scope: "row" }, [document.createTextNode(keys[index][column])]);
          row.replaceChild(label, cell);
        });
      });
      for (const body of bodies.slice(1)) body.remove();
    }
  }

  // --- 2. the listing browser ------------------------------------------------------------------------

  const PAGE_SIZES = [25, 50, 100, 200];
  // a side's differing spans: the static page's colours and line styles for the two compared (orange solid,
  // blue dashed); an output's as the side compared that has the span, green dotted when neither has it;
  // spans both sides compared have are grey
  const SIDE_MARKS = ["first", "second", "side-2"];

  function spanKey(span) {
    return span[0] + "\u0000" + span[1] + "\u0000" + span[2];
  }

  function browser(container, listing) {
    const columns = listing.columns;
    const rows = listing.rows;
    const total = rows.length;
    // precomputed once: each line's searchable text in lower case, each number column as numbers
    const searchable = new Array(total);
    for (let index = 0; index < total; index++) {
      const parts = [];
      columns.forEach(function (column, position) {
        const value = rows[index][position];
        if (column.kind === "list") parts.push(value.join("\u0000"));
        else if (column.kind === "text") parts.push(value);
      });
      const item = listing.items[index];
      if (item && item[0] !== null) parts.push(listing.texts[item[0]]);
      searchable[index] = parts.join("\u0000").toLowerCase();
    }
    const numbers = {};
    columns.forEach(function (column, position) {
      if (column.kind !== "number") return;
      const values = new Float64Array(total);
      for (let index = 0; index < total; index++) values[index] = rows[index][position];
      numbers[column.key] = values;
    });
    const identity = new Int32Array(total);
    for (let index = 0; index < total; index++) identity[index] = index;
    const orders = {};  // sorted orders, made once per column and direction

    const state = { search: "", choices: {}, minimum: {}, sort: null, direction: 1, page: 0, size: PAGE_SIZES[0] };
    let matched = identity;

    // the controls
    const form = make("form", { className: "filters", role: "search", "aria-label": "Filter the lines" });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    const search = make("input", { type: "search", id: "browser-search", autocomplete: "off", spellcheck: "false" });
    form.appendChild(make("label", { for: "browser-search" }, [
      document.createTextNode(listing.texts.length ? "Search ids, labels and text" : "Search ids and labels"), search]));
    search.addEventListener("input", function () { state.search = search.value.toLowerCase(); state.page = 0; update(); });
    columns.forEach(function (column, position) {
      const id = "browser-filter-" + position;
      if (column.filter === "choice") {
        const present = new Map();
        for (const row of rows) {
          for (const value of column.kind === "list" ? row[position] : [row[position]]) {
            present.set(value, (present.get(value) || 0) + 1);
          }
        }
        const select = make("select", { id: id }, [make("option", { value: "", text: "all (" + present.size + ")" })]);
        const values = Array.from(present.keys()).sort(compareText);
        values.forEach(function (value, number) {
          select.appendChild(make("option", { value: String(number), text: "\u2068" + value + "\u2069 (" + count(present.get(value)) + ")" }));
        });
        select.addEventListener("change", function () {
          if (select.value === "") delete state.choices[position];
          else state.choices[position] = values[Number(select.value)];
          state.page = 0;
          update();
        });
        form.appendChild(make("label", { for: id }, [document.createTextNode(column.label), select]));
      } else if (column.filter === "min") {
        const input = make("input", { type: "number", id: id, inputmode: "numeric", step: "any" });
        input.addEventListener("input", function () {
          const value = parseFloat(input.value);
          if (Number.isNaN(value)) delete state.minimum[column.key];
          else state.minimum[column.key] = value;
          state.page = 0;
          update();
        });
        form.appendChild(make("label", { for: id }, [document.createTextNode(column.label + " at least"), input]));
      }
    });
    const size = make("select", { id: "browser-size" });
    for (const value of PAGE_SIZES) size.appendChild(make("option", { value: String(value), text: String(value) }));
    size.addEventListener("change", function () { state.size = Number(size.value); state.page = 0; update(); });
    form.appendChild(make("label", { for: "browser-size" }, [document.createTextNode("Lines per page"), size]));

    const status = make("p", { className: "count", role: "status", "aria-live": "polite", id: "browser-count" });

    const headRow = make("tr");
    columns.forEach(function (column) {
      const th = make("th", { scope: "col", className: column.kind === "number" ? "num" : null }, [document.createTextNode(column.label)]);
      headRow.appendChild(th);
      sortHeader(th, function (direction) { state.sort = column; state.direction = direction; state.page = 0; update(); });
    });
    const body = make("tbody");
    const table = make("table", { className: "listing", "aria-describedby": "browser-count" }, [
      make("caption", { className: "visually-hidden", text: listing.title + ": one row per line, the item under it" }),
      make("thead", {}, [headRow]), body]);

    const pager = make("nav", { className: "pager", "aria-label": "Pages of lines" });
    const buttons = {};
    const where = make("span");
    for (const [key, label] of [["first", "First"], ["previous", "Previous"], ["next", "Next"], ["last", "Last"]]) {
      buttons[key] = make("button", { type: "button", text: label });
      buttons[key].addEventListener("click", function () {
        const last = Math.max(0, Math.ceil(matched.length / state.size) - 1);
        state.page = key === "first" ? 0 : key === "last" ? last
          : Math.min(last, Math.max(0, state.page + (key === "next" ? 1 : -1)));
        update();
      });
    }
    pager.append(buttons.first, buttons.previous, where, buttons.next, buttons.last);

    const held = listing.lines > total
      ? "This page holds the " + count(total) + " lines with most impact of the " + count(listing.lines) +
        " the listing has; every line is in " + listing.files.join(" and ") + "."
      : "This page holds every line of the listing (" + count(total) + ").";
    container.append(
      make("h2", { text: "Every line: filter, search, sort" }),
      make("p", { className: "table-note", text: held + " Click or press Enter on a column's header to sort by it." }),
      form, status, make("div", { className: "table-scroll" }, [table]), pager);

    // --- filtering, sorting, drawing

    function ordered() {
      if (state.sort === null) return identity;
      const key = state.sort.key + (state.direction > 0 ? "+" : "-");
      if (!orders[key]) {
        const position = columns.indexOf(state.sort);
        const order = Array.from(identity);
        const direction = state.direction;
        if (state.sort.kind === "number") {
          const values = numbers[state.sort.key];
          order.sort(function (a, b) { return (values[a] - values[b]) * direction || a - b; });
        } else {
          const text = rows.map(function (row) {
            return state.sort.kind === "list" ? row[position].join(", ") : row[position];
          });
          order.sort(function (a, b) { return compareText(text[a], text[b]) * direction || a - b; });
        }
        orders[key] = Int32Array.from(order);
      }
      return orders[key];
    }

    function filter() {
      const order = ordered();
      const choices = Object.entries(state.choices).map(function ([position, value]) {
        return [Number(position), value, columns[position].kind === "list"];
      });
      const minimum = Object.entries(state.minimum).map(function ([key, value]) { return [numbers[key], value]; });
      const term = state.search;
      if (!choices.length && !minimum.length && !term) return order;
      const found = new Int32Array(order.length);
      let size = 0;
      lines: for (let at = 0; at < order.length; at++) {
        const index = order[at];
        for (const [position, value, list] of choices) {
          const cell = rows[index][position];
          if (list ? cell.indexOf(value) < 0 : cell !== value) continue lines;
        }
        for (const [values, value] of minimum) {
          if (!(values[index] >= value)) continue lines;
        }
        if (term && searchable[index].indexOf(term) < 0) continue;
        found[size++] = index;
      }
      return found.subarray(0, size);
    }

    function update() {
      matched = filter();
      const pages = Math.max(1, Math.ceil(matched.length / state.size));
      state.page = Math.min(state.page, pages - 1);
      const from = state.page * state.size;
      const to = Math.min(matched.length, from + state.size);
      body.replaceChildren();
      for (let at = from; at < to; at++) drawLine(matched[at]);
      const all = matched.length === total;
      status.textContent = matched.length === 0
        ? "No line matches (of " + count(total) + ")."
        : "Lines " + count(from + 1) + "\u2013" + count(to) + " of " +
          (all ? count(total) : count(matched.length) + " matching (of " + count(total) + ")") + ".";
      where.textContent = "Page " + count(state.page + 1) + " of " + count(pages);
      buttons.first.disabled = buttons.previous.disabled = state.page === 0;
      buttons.next.disabled = buttons.last.disabled = state.page >= pages - 1;
    }

    const LONG_LIST = 4;  // labels a list cell holds before it is given a minimum width (td.long)

    function drawLine(index) {
      const row = rows[index];
      const line = make("tr", { className: "line" });
      columns.forEach(function (column, position) {
        const value = row[position];
        if (column.kind === "number") {
          line.appendChild(make("td", { className: "num", text: count(value) }));
        } else if (column.kind === "list") {
          // a long list (many outputs) gets room to wrap a few names a line, not one: on a phone its row
          // would otherwise stand a screen tall, blank where the table scrolls out of view
          const cell = make("td", { className: value.length > LONG_LIST ? "long" : null });
          value.forEach(function (label, number) {
            if (number) cell.appendChild(document.createTextNode(", "));
            cell.appendChild(isolated(label));
          });
          line.appendChild(cell);
        } else {
          line.appendChild(make("td", { className: column.key === "id" ? "id" : null }, [isolated(value)]));
        }
      });
      body.appendChild(line);
      const item = listing.items[index];
      if (item) {
        body.appendChild(make("tr", { className: "detail" }, [
          make("td", { colspan: String(columns.length) }, [drawItem(item)])]));
      }
    }

    function drawItem(item) {
      const [textIndex, windows, sides, notes] = item;
      const text = textIndex === null ? null : listing.texts[textIndex];
      // an output's span that the two sides compared do not both have is marked as the side that has it
      // (orange, blue), or green when neither has it
      const compared = sides.slice(0, 2).map(function ([, spans]) { return new Set(spans.map(spanKey)); });
      const theirs = sides.slice(0, 2).flatMap(function ([, spans]) { return spans; });
      function agrees(span) {
        const key = spanKey(span);
        return compared[0] && compared[0].has(key) ? 0 : compared[1] && compared[1].has(key) ? 1 : 2;
      }
      // an output's span: a position among the two sides' spans, or [start, end, type]; it differs unless
      // both sides compared have it
      function decoded(value) {
        const span = typeof value === "number" ? theirs[value] : value;
        const key = spanKey(span);
        const both = compared.length === 2 && compared[0].has(key) && compared[1].has(key);
        return [span[0], span[1], span[2], both ? 0 : 1];
      }
      const detail = make("div", { className: "item-detail" });
      const panels = make("div", { className: "sides" });
      sides.forEach(function ([named, written], side) {
        const spans = side < 2 ? written : written.map(decoded);
        // a side compared is one name; an output side lists every output with these very spans
        const group = namesOf(named);
        const panel = make("div", { className: side < 2 ? "side" : "side output", role: "group",
                                    "aria-label": group.join(", ") });
        const heading = make("p", { className: "side-name" });
        group.forEach(function (name, number) {
          if (number) heading.appendChild(document.createTextNode(", "));
          heading.appendChild(isolated(name));
        });
        panel.appendChild(heading);
        const classOf = function (span) { return SIDE_MARKS[side < 2 ? side : agrees(span)]; };
        if (text !== null) panel.appendChild(highlighted(text, windows, spans, classOf));
        const list = make("ul");
        for (const span of spans) {
          const [start, end, type, differs] = span;
          let said = null;  // what differs: only here (a side compared), or which side an output's span is as
          if (differs && side < 2) said = [document.createTextNode(" (only here)")];
          else if (differs) {
            const as = agrees(span);
            said = as === 2 ? [document.createTextNode(" (in neither)")]
              : [document.createTextNode(" (as "), isolated(namesOf(sides[as][0]).join(", ")), document.createTextNode(")")];
          }
          list.appendChild(make("li", {}, [
            make("span", { className: "offsets", text: "[" + start + ", " + end + ")" }),
            document.createTextNode(" "), isolated(type),
            text === null ? null : document.createTextNode(" \u00ab"),
            text === null ? null : isolated(text.slice(start, end)),
            text === null ? null : document.createTextNode("\u00bb"),
            ...(said || [])]));
        }
        if (!spans.length) list.appendChild(make("li", { text: "no span" }));
        panel.appendChild(list);
        panels.appendChild(panel);
      });
      detail.appendChild(panels);
      if (notes.length) {
        const head = make("tr", {}, listing.noteColumns.map(function (label) { return make("th", { scope: "col", text: label }); }));
        const noteRows = notes.map(function (note) {
          return make("tr", {}, note.map(function (value, position) {
            return position ? make("td", { text: value }) : make("th", { scope: "row" }, [isolated(value)]);
          }));
        });
        detail.appendChild(make("table", { className: "notes" }, [make("thead", {}, [head]), make("tbody", {}, noteRows)]));
      }
      return detail;
    }

    function namesOf(named) {
      return Array.isArray(named) ? named.map(function (index) { return listing.names[index]; }) : [listing.names[named]];
    }

    // The text (or its windows) with one side's spans marked: a piece is marked classOf(span) when a span that
    // differs covers it, "shared" when only spans both sides have do.
    function highlighted(text, windows, spans, classOf) {
      const paragraph = make("p", { className: "item-text", dir: "auto" });
      (windows || [[0, text.length]]).forEach(function ([low, high], number) {
        if (number) paragraph.appendChild(make("span", { className: "cut", text: " \u2026 " }));
        const cuts = new Set([low, high]);
        for (const [start, end] of spans) {
          if (low < start && start < high) cuts.add(start);
          if (low < end && end < high) cuts.add(end);
        }
        const at = Array.from(cuts).sort(function (a, b) { return a - b; });
        const window = make("bdi", { dir: "auto" });
        for (let piece = 0; piece + 1 < at.length; piece++) {
          const start = at[piece], end = at[piece + 1];
          let mark = "";
          for (const span of spans) {
            if (span[0] <= start && end <= span[1]) mark = span[3] ? classOf(span) : mark || "shared";
          }
          const words = text.slice(start, end);
          if (!mark) window.appendChild(document.createTextNode(words));
          else window.appendChild(make("mark", { className: mark, text: words }));
        }
        paragraph.appendChild(window);
      });
      return paragraph;
    }

    update();
    // the browser replaces the static list of the lines with most impact
    for (const node of document.querySelectorAll(".static-listing")) node.hidden = true;
    container.hidden = false;
  }

  function start() {
    for (const table of document.querySelectorAll("table.sortable")) sortableTable(table);
    const container = document.getElementById("browser");
    const listings = window.refsensListings || [];
    if (container) {
      const listing = listings.find(function (found) { return found.name === container.dataset.listing; });
      if (listing) browser(container, listing);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
