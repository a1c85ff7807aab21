// The session header in one element: task, status, recovered, integrity (what the reader found as
// its hover), the bundle's signer (each check as its hover), loading progress, counts. Text
// interpolation and bound attributes only: the task and the notes come from the journal.
//   head: {task, status, color, recovered, integrity, integrity_color, notes,
//          signed: {label, color, checks} | null, counts};  loading: "" or the progress text
export default {
  template: `
    <div class="nicegui-row row items-center gap-2 no-wrap min-w-0">
      <div class="wb-task" :title="head.task">{{ head.task }}</div>
      <q-badge :color="head.color">{{ head.status }}</q-badge>
      <q-badge v-if="head.recovered" color="purple">recovered</q-badge>
      <q-badge :color="head.integrity_color" :title="head.notes">{{ head.integrity }}</q-badge>
      <q-badge v-if="head.signed" :color="head.signed.color" :title="head.signed.checks">{{ head.signed.label }}</q-badge>
      <template v-if="loading">
        <q-spinner size="sm" color="white" />
        <div class="text-xs text-amber-2">{{ loading }}</div>
      </template>
      <q-space />
      <div class="text-xs wb-counts whitespace-nowrap">{{ head.counts }}</div>
    </div>`,
  props: { head: Object, loading: String },
};
