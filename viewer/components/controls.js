// The replay buttons, the speed and the jump box: one element instead of seven (its labels and
// hints are ours). Enter in the jump box sends its text as "jump".
//   playing: the play button shows pause; speed: steps per second, one of speeds [{label, value}]
export default {
  template: `
    <div class="nicegui-row row items-center gap-0 no-wrap">
      <q-btn v-for="b in buttons" :key="b.act" flat dense color="primary" :class="'wb-' + b.act"
             :icon="b.act === 'toggle' && playing ? 'pause' : b.icon" :title="b.hint"
             @click="$emit('act', b.act)" />
      <q-select dense options-dense borderless emit-value map-options class="w-16"
                title="steps per second" :model-value="speed" :options="speeds"
                @update:model-value="(v) => $emit('speed', v)" />
      <q-input ref="jump" v-model="text" dense clearable class="w-48 wb-jump"
               placeholder="go to lsn, agent:lsn, #step (g)" @keydown.enter="$emit('jump', text ?? '')" />
    </div>`,
  props: { playing: Boolean, speed: Number, speeds: Array },
  methods: {
    focusJump() {
      this.$refs.jump.focus();
    },
  },
  data() {
    return {
      text: "",
      buttons: [
        { act: "first", icon: "first_page", hint: "first step" },
        { act: "prev", icon: "chevron_left", hint: "previous (k, ←)" },
        { act: "toggle", icon: "play_arrow", hint: "play / pause (space)" },
        { act: "next", icon: "chevron_right", hint: "next (j, →)" },
        { act: "last", icon: "last_page", hint: "last step" },
      ],
    };
  },
};
