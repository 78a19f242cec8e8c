// Sorting, filtering and paging for the report's tables. Reads and moves existing rows
// only (textContent, never innerHTML), so text from the report cannot become markup.
(function () {
  "use strict";

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var raw = cell.getAttribute("data-value");
    var text = raw !== null ? raw : cell.textContent.trim();
    var number = parseFloat(text);
    return isNaN(number) || !/^-?[\d.]+%?( s)?$/.test(text) ? text.toLowerCase() : number;
  }

  function Table(table) {
    this.table = table;
    this.body = table.tBodies[0];
    this.pageSize = parseInt(table.getAttribute("data-page-size") || "0", 10);
    this.page = 0;
    this.text = "";
    this.status = "";
    this.pager = null;
    if (this.pageSize) {
      this.pager = document.createElement("div");
      this.pager.className = "pager";
      table.parentNode.insertBefore(this.pager, table.nextSibling);
    }
    var self = this;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, index) {
      // A header is a control: reachable with Tab, sorted with Enter or Space too.
      header.tabIndex = 0;
      header.setAttribute("role", "columnheader");
      header.addEventListener("click", function () { self.sort(header, index); });
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          self.sort(header, index);
        }
      });
    });
    this.update();
  }

  Table.prototype.rows = function () {
    return Array.prototype.slice.call(this.body.rows);
  };

  Table.prototype.matches = function (row) {
    if (this.status && row.getAttribute("data-status") !== this.status) return false;
    return !this.text || row.textContent.toLowerCase().indexOf(this.text) !== -1;
  };

  Table.prototype.sort = function (header, index) {
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(this.table.tHead.rows[0].cells, function (cell) {
      cell.removeAttribute("aria-sort");
    });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var rows = this.rows().map(function (row, position) {
      return { row: row, key: cellValue(row, index), position: position };
    });
    rows.sort(function (a, b) {
      var order = 0;
      if (typeof a.key === "number" && typeof b.key === "number") order = a.key - b.key;
      else order = String(a.key).localeCompare(String(b.key));
      if (!ascending) order = -order;
      return order || a.position - b.position;
    });
    var body = this.body;
    rows.forEach(function (item) { body.appendChild(item.row); });
    this.page = 0;
    this.update();
  };

  Table.prototype.update = function () {
    var self = this;
    var shown = this.rows().filter(function (row) { return self.matches(row); });
    var pages = this.pageSize ? Math.max(1, Math.ceil(shown.length / this.pageSize)) : 1;
    if (this.page >= pages) this.page = pages - 1;
    var first = this.pageSize ? this.page * this.pageSize : 0;
    var last = this.pageSize ? first + this.pageSize : shown.length;
    this.rows().forEach(function (row) { row.hidden = true; });
    shown.slice(first, last).forEach(function (row) { row.hidden = false; });
    if (this.pager) this.renderPager(shown.length, pages);
  };

  Table.prototype.renderPager = function (count, pages) {
    var self = this;
    while (this.pager.firstChild) this.pager.removeChild(this.pager.firstChild);
    function button(label, page, enabled) {
      var element = document.createElement("button");
      element.type = "button";
      element.textContent = label;
      element.disabled = !enabled;
      element.addEventListener("click", function () { self.page = page; self.update(); });
      self.pager.appendChild(element);
    }
    button("previous", this.page - 1, this.page > 0);
    var label = document.createElement("span");
    label.className = "page-label";
    label.textContent = "page " + (this.page + 1) + " of " + pages + " (" + count + " rows)";
    this.pager.appendChild(label);
    button("next", this.page + 1, this.page < pages - 1);
  };

  var tables = {};
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    tables[table.id] = new Table(table);
  });
  Array.prototype.forEach.call(document.querySelectorAll("input[data-filter]"), function (input) {
    input.addEventListener("input", function () {
      var table = tables[input.getAttribute("data-filter")];
      table.text = input.value.trim().toLowerCase();
      table.page = 0;
      table.update();
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("select[data-status-filter]"), function (select) {
    select.addEventListener("change", function () {
      var table = tables[select.getAttribute("data-status-filter")];
      table.status = select.value;
      table.page = 0;
      table.update();
    });
  });
  // A link to a source line opens its file first.
  function reveal() {
    var target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    var details = target && target.closest("details");
    if (details) { details.open = true; target.scrollIntoView(); }
  }
  window.addEventListener("hashchange", reveal);
  reveal();
})();
