// Lines of text (code, command output, diffs) rendered by Vue's text interpolation: whatever a
// line holds is shown as text, never parsed as HTML. Blank lines keep their height.
//   rows: [[cls, number, text], ...] (unified, plain) or [[lcls, lno, ltext, rcls, rno, rtext], ...] (split)
export default {
  template: `
    <div :class="['wb-lines', split ? 'wb-lines-split' : '', numbered ? 'wb-numbered' : '']">
      <template v-if="split">
        <template v-for="(r, k) in rows" :key="k">
          <span :class="['wb-no', r[0]]">{{ r[1] }}</span><span :class="['wb-txt', r[0]]">{{ r[2] }}</span>
          <span :class="['wb-no', r[3]]">{{ r[4] }}</span><span :class="['wb-txt', r[3]]">{{ r[5] }}</span>
        </template>
      </template>
      <template v-else>
        <template v-for="(r, k) in rows" :key="k">
          <span v-if="numbered" :class="['wb-no', r[0]]">{{ r[1] }}</span><span :class="['wb-txt', r[0]]">{{ r[2] }}</span>
        </template>
      </template>
    </div>`,
  props: { rows: Array, split: Boolean, numbered: Boolean },
};
