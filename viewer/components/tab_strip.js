// The detail pane's tab strip as one element (a q-tabs and a q-tab per tab were seven NiceGUI
// elements of every page view). The tab shown changes at once; the server is told with "change".
//   tabs: [name, ...] (ours, never a record's); value: the tab shown
export default {
  template: `
    <q-tabs :model-value="current" dense align="left" no-caps inline-label
            @update:model-value="pick">
      <q-tab v-for="t in tabs" :key="t" :name="t" :label="t[0].toUpperCase() + t.slice(1)" />
    </q-tabs>`,
  props: { tabs: Array, value: String },
  data() {
    return { current: this.value };
  },
  watch: {
    value(v) {
      this.current = v;
    },
  },
  methods: {
    pick(v) {
      this.current = v;
      this.$emit("change", v);
    },
  },
};
