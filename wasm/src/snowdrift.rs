//! The `Snowdrift` class: a core `Generator` over a JS clock.

use alloc::vec;
use alloc::vec::Vec;
use snowdrift::{Error, Generator, Layout};
use wasm_bindgen::prelude::*;

use crate::clock::JsClock;
use crate::interop::{self, JsResult};

/// The most IDs one `nextBatch` call returns.
const MAX_BATCH: u64 = 1 << 20;

/// A Snowflake ID generator.
#[wasm_bindgen]
pub struct Snowdrift {
    gen: Generator<JsClock>,
}

#[wasm_bindgen]
impl Snowdrift {
    /// `new Snowdrift({ layout, node | datacenter + worker, onClockBackwards, maxWaitMs,
    /// maxAheadMs, clock, notBefore })`; every option may be left out.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> JsResult<Snowdrift> {
        let options = if options.is_undefined() || options.is_null() {
            js_sys::Object::new().into()
        } else {
            options
        };
        interop::check_keys(
            "Snowdrift",
            &options,
            &[
                "layout",
                "node",
                "datacenter",
                "worker",
                "onClockBackwards",
                "maxWaitMs",
                "maxAheadMs",
                "clock",
                "notBefore",
            ],
        )?;
        let layout = interop::layout_arg(&interop::get(&options, "layout"))?;
        let node = interop::node_arg(&options, &layout)?;
        let policy = interop::policy_arg(&options)?;
        let clock = JsClock::new(interop::clock_arg(&options)?);
        let mut gen = Generator::new(clock, layout, node, policy).map_err(interop::gen_error)?;
        let not_before = interop::get(&options, "notBefore");
        if !not_before.is_undefined() {
            let id = interop::id_arg("notBefore", &not_before)?;
            gen.resume_after(id).map_err(interop::gen_error)?;
        }
        Ok(Snowdrift { gen })
    }

    /// The next ID.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> JsResult<u64> {
        let r = self.gen.next();
        r.map_err(|e| self.fail(e))
    }

    /// The next ID as a decimal string (safe in JSON).
    #[wasm_bindgen(js_name = nextString)]
    pub fn next_string(&mut self) -> JsResult<JsValue> {
        let r = self.gen.next();
        match r {
            Ok(id) => Ok(interop::decimal_to_js(id)),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// The next ID if one is ready without waiting, else `undefined`.
    #[wasm_bindgen(js_name = tryNext)]
    pub fn try_next(&mut self) -> JsResult<Option<u64>> {
        let r = self.gen.try_next();
        match r {
            Ok(id) => Ok(Some(id)),
            Err(Error::WouldBlock) => Ok(None),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// `n` increasing IDs.
    #[wasm_bindgen(js_name = nextBatch)]
    pub fn next_batch(&mut self, n: JsValue) -> JsResult<Vec<u64>> {
        let n = interop::int_arg("n", &n, 1, MAX_BATCH)? as usize;
        let mut out = vec![0u64; n];
        let mut done = 0;
        while done < n {
            let want = (n - done) as u32;
            let r = self.gen.next_batch(want);
            match r {
                Ok(batch) => done += batch.write_to(&mut out[done..]),
                Err(e) => return Err(self.fail(e)),
            }
        }
        Ok(out)
    }

    /// The parts of an ID of this generator's layout.
    pub fn decode(&self, id: JsValue) -> JsResult<JsValue> {
        crate::functions::decode_with(&self.gen.layout(), &id)
    }

    /// The node id.
    #[wasm_bindgen(getter)]
    pub fn node(&self) -> f64 {
        self.gen.node() as f64
    }
}

impl Snowdrift {
    /// The error to throw: the clock function's own, if it failed, else the core's.
    fn fail(&self, e: Error) -> JsValue {
        self.gen
            .clock()
            .take_error()
            .unwrap_or_else(|| interop::gen_error(e))
    }

    /// The layout (for the other classes of this crate).
    pub fn layout(&self) -> Layout {
        self.gen.layout()
    }
}
