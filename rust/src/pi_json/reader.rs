//! Reading one pi-JSON object: its known keys, each checked for the type its field holds, and the
//! keys its type does not model, which become the object's `extra_json`.

use serde_json::{Number, Value};

use super::keys::ORDER_KEY;
use super::names::{Words, listed, value_of};
use super::{PiJsonError, Result, at};
use crate::js_json::{JsonObject, field_json};

/// The kind of empty value a repeated field the writer leaves out when empty may be given as.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Empty {
    List,
    Object,
}

/// One object being read.
pub(super) struct Reader<'a> {
    pub(super) obj: &'a JsonObject,
    /// The path of the object, for errors.
    pub(super) at: &'a str,
    /// The keys its type models, in the writer's order: the order an object keeps unrecorded.
    keys: &'a [String],
    /// The keys that are not extras: `keys`, but for an event, which has no `extra_json`.
    pub(super) known: Vec<&'a str>,
    /// The extras so far: the empty values `omitted_when_empty` kept.
    extra: JsonObject,
}

impl<'a> Reader<'a> {
    /// A reader of `value`, which must be an object.
    pub(super) fn new(value: &'a Value, at: &'a str, keys: &'a [String]) -> Result<Self> {
        let Value::Object(obj) = value else {
            return Err(expected_object(value, at));
        };
        Ok(Self {
            obj,
            at,
            keys,
            known: keys.iter().map(String::as_str).collect(),
            extra: JsonObject::new(),
        })
    }

    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key)
    }

    pub(super) fn has(&self, key: &str) -> bool {
        self.obj.contains_key(key)
    }

    /// The path of `key` in this object.
    pub(super) fn path(&self, key: &str) -> String {
        at(self.at, key)
    }

    pub(super) fn fail(&self, key: &str, expected: &str) -> PiJsonError {
        let found = describe(self.get(key));
        PiJsonError::new(self.path(key), format!("expected {expected}, got {found}"))
    }

    pub(super) fn string(&self, key: &str) -> Result<String> {
        match self.get(key) {
            Some(Value::String(text)) => Ok(text.clone()),
            _ => Err(self.fail(key, "a string")),
        }
    }

    pub(super) fn optional_string(&self, key: &str) -> Result<Option<String>> {
        self.optional(key, Self::string)
    }

    pub(super) fn boolean(&self, key: &str) -> Result<bool> {
        match self.get(key) {
            Some(Value::Bool(flag)) => Ok(*flag),
            _ => Err(self.fail(key, "a boolean")),
        }
    }

    pub(super) fn optional_boolean(&self, key: &str) -> Result<Option<bool>> {
        self.optional(key, Self::boolean)
    }

    /// A 64-bit integer; JavaScript has numbers only, so `1.0` and `-0` are integers too.
    pub(super) fn integer(&self, key: &str) -> Result<i64> {
        match self.get(key) {
            Some(Value::Number(number)) => integer_of(number),
            _ => None,
        }
        .ok_or_else(|| self.fail(key, "a 64-bit integer"))
    }

    pub(super) fn optional_integer(&self, key: &str) -> Result<Option<i64>> {
        self.optional(key, Self::integer)
    }

    /// A double: any JSON number, read as JavaScript reads it.
    pub(super) fn optional_number(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(number)) => Ok(number.as_f64()),
            Some(_) => Err(self.fail(key, "a number")),
        }
    }

    /// One of an enum's pi words; a word pi does not define is refused, as nothing could hold it.
    pub(super) fn choice<E: Copy>(&self, key: &str, words: &Words<E>) -> Result<E> {
        let word = self.string(key)?;
        value_of(words, &word).ok_or_else(|| {
            let detail = format!("expected one of {}, got {word:?}", listed(words));
            PiJsonError::new(self.path(key), detail)
        })
    }

    pub(super) fn optional_choice<E: Copy>(
        &self,
        key: &str,
        words: &Words<E>,
    ) -> Result<Option<E>> {
        self.optional(key, |read, key| read.choice(key, words))
    }

    /// A list, each item read by `read`.
    pub(super) fn items<T>(
        &self,
        key: &str,
        read: impl Fn(&'a Value, &str) -> Result<T>,
    ) -> Result<Vec<T>> {
        list(self.get(key), &self.path(key), read)
    }

    /// A list that may be missing, which reads as empty.
    pub(super) fn items_or_none<T>(
        &self,
        key: &str,
        read: impl Fn(&'a Value, &str) -> Result<T>,
    ) -> Result<Vec<T>> {
        if self.has(key) {
            self.items(key, read)
        } else {
            Ok(Vec::new())
        }
    }

    /// A value read by `read`, if the key is there.
    pub(super) fn child<T>(
        &self,
        key: &str,
        read: impl FnOnce(&'a Value, &str) -> Result<T>,
    ) -> Result<Option<T>> {
        self.get(key)
            .map(|value| read(value, &self.path(key)))
            .transpose()
    }

    /// A repeated field the writer leaves out when empty: an empty list or object given under its
    /// key, which the field cannot tell from none, is kept as an extra.
    pub(super) fn omitted_when_empty<T>(
        &mut self,
        key: &str,
        empty: Empty,
        read: impl FnOnce(&'a Value, &str) -> Result<Vec<T>>,
    ) -> Result<Vec<T>> {
        let Some(value) = self.get(key) else {
            return Ok(Vec::new());
        };
        let is_empty = match value {
            Value::Array(items) => empty == Empty::List && items.is_empty(),
            Value::Object(members) => empty == Empty::Object && members.is_empty(),
            _ => false,
        };
        if is_empty {
            self.extra.insert(key.to_owned(), value.clone());
            return Ok(Vec::new());
        }
        read(value, &self.path(key))
    }

    /// A value kept as JSON text; absent stays absent.
    pub(super) fn json_text(&self, key: &str, object_only: bool) -> Result<Option<String>> {
        match self.get(key) {
            None => Ok(None),
            Some(value) if object_only && !value.is_object() => Err(self.fail(key, "an object")),
            Some(value) => Ok(Some(field_json(value))),
        }
    }

    /// The keys the type does not model (and the empty values `omitted_when_empty` kept), and
    /// the keys' order when the writer's differs, as JSON object text; empty when there are none.
    pub(super) fn extra_json(mut self) -> String {
        for (key, value) in self.obj {
            if !self.known.contains(&key.as_str()) {
                self.extra.insert(key.clone(), value.clone());
            }
        }
        if !self.keys.is_empty() && !self.in_writer_order() {
            let order = self.obj.keys().cloned().map(Value::String).collect();
            self.extra.insert(ORDER_KEY.to_owned(), Value::Array(order));
        }
        if self.extra.is_empty() {
            String::new()
        } else {
            field_json(&Value::Object(self.extra))
        }
    }

    /// Whether the writer, which writes the modelled keys in its order and the extras after
    /// them, gives the keys in the order this object has them.
    fn in_writer_order(&self) -> bool {
        let written = self
            .keys
            .iter()
            .filter(|key| self.obj.contains_key(key.as_str()));
        let extras = self
            .obj
            .keys()
            .filter(|key| !self.known.contains(&key.as_str()));
        self.obj.keys().eq(written.chain(extras))
    }

    fn optional<T>(
        &self,
        key: &str,
        read: impl FnOnce(&Self, &str) -> Result<T>,
    ) -> Result<Option<T>> {
        if self.has(key) {
            read(self, key).map(Some)
        } else {
            Ok(None)
        }
    }
}

/// A list, each item read by `read` with its path (`content[1]`).
pub(super) fn list<'a, T>(
    value: Option<&'a Value>,
    at: &str,
    read: impl Fn(&'a Value, &str) -> Result<T>,
) -> Result<Vec<T>> {
    let Some(Value::Array(items)) = value else {
        return Err(PiJsonError::new(
            at,
            format!("expected a list, got {}", describe(value)),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| read(item, &format!("{at}[{index}]")))
        .collect()
}

/// A JSON number as a 64-bit integer, if it is one: read as JSON.parse reads it (a double, so
/// beyond 2^53 the nearest one), integral and in range.
fn integer_of(number: &Number) -> Option<i64> {
    let double = number.as_f64()?;
    let in_range = (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&double);
    #[allow(clippy::cast_possible_truncation)]
    (double.fract() == 0.0 && in_range).then_some(double as i64)
}

pub(super) fn expected_object(value: &Value, at: &str) -> PiJsonError {
    PiJsonError::new(at, format!("expected an object, got {}", type_name(value)))
}

pub(super) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "object",
        Value::Array(_) => "list",
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
        Value::Number(_) => "number",
    }
}

/// What a bad value is, for an error: its type and the start of its text.
pub(super) fn describe(value: Option<&Value>) -> String {
    match value {
        None => "nothing (the key is missing)".to_owned(),
        Some(value) => {
            let text: String = field_json(value).chars().take(40).collect();
            format!("{} {text}", type_name(value))
        }
    }
}
