// The timeline's key in one element: a chip per category (colour, symbol, name), how to zoom,
// whether the lanes show density, and the time / step switch of the x axis ("mode": true for step).
// Every word and colour is ours (the categories), never a record's.
//   chips: [[colour, symbol, label], ...]; note: text; time: the x axis can be time; step: it is steps
export default {
  template: `
    <div class="nicegui-row row items-center gap-2 w-full no-wrap">
      <div class="wb-chips grow">
        <span v-for="c in chips" :key="c[2]" class="wb-chip"><span class="wb-dot" :style="{ color: c[0] }">{{ c[1] }}</span>{{ c[2] }}</span>
        <span class="wb-chip-note">{{ note }}</span>
      </div>
      <q-btn-toggle v-if="time" :model-value="step" dense no-caps size="xs" class="wb-x-mode"
                    :options="[{ label: 'time', value: false }, { label: 'step', value: true }]"
                    toggle-color="primary" @update:model-value="(v) => $emit('mode', v)" />
    </div>`,
  props: { chips: Array, note: String, time: Boolean, step: Boolean },
};
