// One step's card: its head (title, kind, status, agent:lsn and time), the tool and target, damage,
// then the default slot (the file change, the message, the fields), the intent→commit pair and the
// raw record folded. One element instead of twenty; every value is shown through text
// interpolation or a bound attribute, never as HTML (a journal's content is written by a model).
//   card: {title, kind, type, status, color, badge, meta, what, damage, raw_label, raw,
//          pair: {head, line, status, color, links: [[label, k] ...], verify, error}}
export default {
  template: `
    <div class="nicegui-column wb-step-card">
      <div class="nicegui-row row items-center gap-2 w-full no-wrap">
        <div class="wb-step-title text-base font-bold whitespace-nowrap">{{ card.title }}</div>
        <div class="wb-kind">{{ card.kind }}</div>
        <div class="text-grey-7 font-mono text-xs">{{ card.type }}</div>
        <q-badge v-if="card.title" class="wb-status" :color="card.color">{{ card.status }}</q-badge>
        <q-badge v-if="card.badge" color="negative">{{ card.badge }}</q-badge>
        <div class="text-xs text-grey-8 wb-ellipsis">{{ card.meta }}</div>
      </div>
      <div v-if="card.what" class="font-mono wb-break text-sm">{{ card.what }}</div>
      <div v-if="card.damage" class="text-negative text-sm wb-break wb-pre-line">{{ card.damage }}</div>
      <slot></slot>
      <q-card v-if="pair.head" class="nicegui-card nicegui-card-tight w-full wb-pair">
        <div class="nicegui-column p-2 gap-1">
          <div class="text-xs uppercase text-grey-7">{{ pair.head }}</div>
          <div class="nicegui-row row items-center gap-2">
            <div class="font-mono wb-break text-sm">{{ pair.line }}</div>
            <q-badge v-if="pair.status !== null" :color="pair.color">{{ pair.status || "—" }}</q-badge>
            <q-btn v-for="(l, k) in pair.links" :key="k" :label="l[0]" class="wb-pair-link"
                   flat dense no-caps size="sm" color="primary" @click="$emit('go', l[1])" />
          </div>
          <div v-if="pair.verify" class="text-sm wb-verification">{{ pair.verify }}</div>
          <div v-if="pair.error" class="wb-pre text-negative">{{ pair.error }}</div>
        </div>
      </q-card>
      <q-expansion-item v-if="card.raw_label" :label="card.raw_label" class="nicegui-expansion w-full wb-raw">
        <div class="nicegui-expansion-content"><div class="wb-pre">{{ card.raw }}</div></div>
      </q-expansion-item>
    </div>`,
  props: { card: Object },
  computed: {
    pair() {
      return this.card.pair || {};
    },
  },
};
