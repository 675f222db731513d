//! The `ObjectId` class: MongoDB ObjectIds from the core, with the process bytes and the
//! counter start drawn from `crypto.getRandomValues`.

use snowdrift::{ObjectId as CoreObjectId, ObjectIdGenerator};
use wasm_bindgen::prelude::*;

use crate::clock::JsClock;
use crate::interop::{self, JsResult};
use crate::Global;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues)]
    fn get_random_values(buf: &mut [u8]);
}

/// One generator per module instance (per process, worker or isolate), created on first
/// use: workerd allows no random numbers while a module loads.
static GENERATOR: Global<ObjectIdGenerator<JsClock>> = Global::new();

/// A MongoDB ObjectId: 4 bytes of seconds, 5 random bytes per process, a 3-byte counter.
#[wasm_bindgen]
pub struct ObjectId {
    id: CoreObjectId,
}

#[wasm_bindgen]
impl ObjectId {
    /// A new ObjectId.
    pub fn generate() -> ObjectId {
        let id = GENERATOR.with(|g| {
            let gen = g.get_or_insert_with(|| {
                let mut random = [0u8; 8];
                get_random_values(&mut random);
                let [p0, p1, p2, p3, p4, c0, c1, c2] = random;
                let counter = u32::from_be_bytes([0, c0, c1, c2]);
                ObjectIdGenerator::new(JsClock::new(None), [p0, p1, p2, p3, p4], counter)
            });
            gen.next()
        });
        ObjectId { id }
    }

    /// Parses 24 hex digits.
    pub fn parse(hex: JsValue) -> JsResult<ObjectId> {
        let s = interop::str_arg("hex", &hex)?;
        CoreObjectId::parse(&s)
            .map(|id| ObjectId { id })
            .map_err(|e| interop::parse_error("ObjectId", &s, e))
    }

    /// 24 lowercase hex digits.
    #[wasm_bindgen(js_name = toString)]
    #[allow(clippy::inherent_to_string)]
    pub fn to_string(&self) -> JsValue {
        interop::ascii_to_js(&self.id.to_hex())
    }

    /// The same as `toString()`, so `JSON.stringify` writes the hex form.
    #[wasm_bindgen(js_name = toJSON)]
    pub fn to_json(&self) -> JsValue {
        self.to_string()
    }

    /// Creation time in Unix seconds.
    #[wasm_bindgen(getter)]
    pub fn timestamp(&self) -> u32 {
        self.id.timestamp()
    }
}
