// The step list in one element: the count line, one page of rows (q-table, cells as text) and the
// pager. The props are sent with a new page; a step within the page is mark(step, count), which
// marks its row and scrolls it into view within the list (never the page).
//   rows: [{key, step, where, time, kind, status, what, problem, damaged, crash, goto}]
//   columns: q-table columns; count: "step 3 of 52 · …"; page, pages: the pager; current: a step
export default {
  template: `
    <div class="nicegui-column wb-step-table">
      <div class="text-xs text-grey-7">{{ text }}</div>
      <q-table class="w-full wb-steps" :rows="rows" :columns="columns" row-key="key" dense flat
               :wrap-cells="false" hide-pagination :pagination="{ rowsPerPage: 0 }"
               :table-row-class-fn="rowClass" @row-click="(e, row) => $emit('pick', row.step || row.goto)" />
      <q-pagination :model-value="page" :min="1" :max="pages" direction-links boundary-numbers
                    :max-pages="7" size="sm" @update:model-value="(p) => $emit('page', p)" />
    </div>`,
  props: { rows: Array, columns: Array, count: String, page: Number, pages: Number, current: Number },
  data() {
    return { cur: this.current, text: this.count };
  },
  mounted() {
    // the list's box takes its final height as the page around it settles: keep the row in view
    // through that (reveal does nothing while the row is in view)
    this.reveal();
    const box = this.$el.querySelector(".q-table__middle");
    if (box && window.ResizeObserver) {
      const watcher = new ResizeObserver(() => this.reveal());
      watcher.observe(box);
      setTimeout(() => watcher.disconnect(), 2000);
    }
  },
  watch: {
    rows() {
      this.mark(this.current, this.count);
    },
  },
  methods: {
    mark(step, count) {
      this.cur = step;
      this.text = count;
      this.$nextTick(this.reveal);
    },
    rowClass(row) {
      return (
        (row.step === this.cur ? "wb-current " : "") +
        (row.problem ? "wb-problem " : "") +
        (row.damaged ? "wb-damaged " : "") +
        (row.crash ? "wb-crash" : "")
      );
    },
    // scroll the list (not the page) so the current row is in view, about mid-height if it was not;
    // a crash row just above it is read with it (it says how the run got to this step)
    reveal() {
      const tr = this.$el.querySelector("tbody tr.wb-current");
      const box = this.$el.querySelector(".q-table__middle");
      if (!tr || !box) return;
      const above = tr.previousElementSibling;
      const first = above && above.classList.contains("wb-crash") ? above : tr;
      const b = box.getBoundingClientRect();
      const top = first.getBoundingClientRect().top;
      const bottom = tr.getBoundingClientRect().bottom;
      if (top < b.top + 32 || bottom > b.bottom) {
        box.scrollTop += top - b.top - Math.max(32, (box.clientHeight - (bottom - top)) / 2);
      }
    },
  },
};
