// The filter bar in one element: the text search, "problems only" with its count, the button of
// the other filters (its menu holds the default slot, which the server fills when it first opens)
// and "clear". The inputs keep what the user typed or set; the server is told with "text",
// "problems", "opened" and "clear", and sends the filters back (after back/forward, or clear).
//   text, problems: the filters shown; problem_count: "(3)"; set: how many other filters are set
export default {
  template: `
    <div class="nicegui-row row w-full items-center gap-2 no-wrap">
      <q-input ref="search" v-model="q" class="grow wb-search" dense clearable :debounce="400"
               hide-bottom-space placeholder="search raw records (/)"
               @update:model-value="(v) => $emit('text', v ?? '')" />
      <q-toggle v-model="p" dense class="whitespace-nowrap" label="problems only"
                @update:model-value="(v) => $emit('problems', v)" />
      <div class="text-xs text-grey-7">{{ problem_count }}</div>
      <q-btn flat dense no-caps size="sm" icon="filter_list" :label="set || undefined"
             title="filter by kind, agent, tool, file, status">
        <q-menu max-height="70vh" @show="$emit('opened')"><slot></slot></q-menu>
      </q-btn>
      <q-btn flat dense size="sm" icon="filter_alt_off" title="clear all filters" @click="$emit('clear')" />
    </div>`,
  props: { text: String, problems: Boolean, problem_count: String, set: String },
  data() {
    return { q: this.text, p: this.problems };
  },
  watch: {
    text(v) {
      this.q = v;
    },
    problems(v) {
      this.p = v;
    },
  },
  methods: {
    focus() {
      this.$refs.search.focus();
    },
  },
};
