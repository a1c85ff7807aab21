// A detail's fields: a key, then its value as one line or as a block of lines (split here, in the
// browser, so the server sends each text once). Vue interpolation only: values are text, never HTML.
//   items: [{k, v, block, num}, ...]
export default {
  template: `
    <div class="wb-fieldlist">
      <template v-for="(it, n) in items" :key="n">
        <div class="wb-fk">{{ it.k }}</div>
        <div v-if="!it.block" class="wb-fv">{{ it.v }}</div>
        <div v-else :class="['wb-lines', 'wb-fv', it.num ? 'wb-numbered' : '']">
          <template v-for="(l, j) in lines(it.v)" :key="j">
            <span v-if="it.num" class="wb-no">{{ j + 1 }}</span><span class="wb-txt">{{ l }}</span>
          </template>
        </div>
      </template>
    </div>`,
  props: { items: Array },
  methods: {
    // the text's lines: a final newline ends the last line, it does not start an empty one
    lines(v) {
      return (v.endsWith("\n") ? v.slice(0, -1) : v).split("\n");
    },
  },
};
