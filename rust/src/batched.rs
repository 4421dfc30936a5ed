//! Reading a streaming call's messages with the generated parsers: `StreamBatched`'s as
//! `StreamBatchedView`s (each event left as its bytes), `Stream`'s as one `ModelEvent` each.
//!
//! Decoding a whole StreamBatchedResponse would lose every event of a batch to one bad event. So
//! a batch is read as the view, and each event is decoded only when it is consumed: the events in
//! front of a bad one are applied, and the bad one is reported at its own index (rule
//! `event-decode`). A batch that does not parse as the view fails as a whole, at the index its
//! first event would have had.

use std::marker::PhantomData;

use bytes::{Buf, BufMut, Bytes};
use prost::{DecodeError, Message};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use crate::v1::StreamBatchedView;

/// One response message as the generated parser read it, or why it could not.
pub(crate) type Decoded<T> = Result<T, DecodeError>;

/// The codec of a streaming call: the request as it was encoded (once: a fallback to Stream
/// sends the same bytes), each response message decoded as `T` without failing the call when it
/// does not decode (the call reports that as a broken rule, at the event's index).
pub(crate) struct CallCodec<T>(PhantomData<T>);

impl<T> Default for CallCodec<T> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<T: Message + Default + Send + 'static> Codec for CallCodec<T> {
    type Encode = Bytes;
    type Decode = Decoded<T>;
    type Encoder = Encoded;
    type Decoder = InBand<T>;

    fn encoder(&mut self) -> Self::Encoder {
        Encoded
    }

    fn decoder(&mut self) -> Self::Decoder {
        InBand(PhantomData)
    }
}

/// Sends a message already encoded.
pub(crate) struct Encoded;

impl Encoder for Encoded {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

/// Decodes each message as `T`, handing a failure over as an item rather than as the call's
/// status, which would not say that the server's bytes were at fault.
pub(crate) struct InBand<T>(PhantomData<T>);

impl<T: Message + Default> Decoder for InBand<T> {
    type Item = Decoded<T>;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Decoded<T>>, Status> {
        let decoded = T::decode(&mut *src);
        // tonic expects the message used up, and a failed decode may stop short of its end.
        src.advance(src.remaining());
        Ok(Some(decoded))
    }
}

/// The events of one batch not yet consumed.
pub(crate) struct Batch {
    events: std::vec::IntoIter<Bytes>,
}

impl Batch {
    pub(crate) fn new(view: StreamBatchedView) -> Self {
        Self {
            events: view.events.into_iter(),
        }
    }

    /// The next event's bytes; `None` once the batch is used up.
    pub(crate) fn next(&mut self) -> Option<Bytes> {
        self.events.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events of `batch` through the view, or why it does not parse.
    fn read(batch: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        let view = StreamBatchedView::decode(batch).map_err(|error| error.to_string())?;
        let mut batch = Batch::new(view);
        Ok(std::iter::from_fn(|| batch.next())
            .map(|event| event.to_vec())
            .collect())
    }

    #[test]
    fn a_batch_reads_as_its_events_and_skips_other_fields() {
        let batch = [
            &[0x0a, 2, 0xaa, 0xbb][..],
            &[0x10, 0x96, 0x01],             // field 2, a varint
            &[0x19, 1, 2, 3, 4, 5, 6, 7, 8], // field 3, fixed64
            &[0x0a, 0],                      // an empty event
            &[0x22, 1, 0xcc],                // field 4, length-delimited
            &[0x2d, 1, 2, 3, 4],             // field 5, fixed32
            &[0x0a, 1, 0xdd],
        ]
        .concat();
        assert_eq!(read(&batch), Ok(vec![vec![0xaa, 0xbb], vec![], vec![0xdd]]));
        assert_eq!(read(&[]), Ok(vec![]));
    }

    #[test]
    fn a_malformed_batch_does_not_parse() {
        let good = [0x0a, 1, 0xaa];
        let tails: [&[u8]; 7] = [
            &[0x0a, 5, 1, 2], // an event cut short
            &[0x0a],          // a key without its length
            &[0x0a, 0x80],    // a length cut short
            &[0x08, 1],       // events as a varint
            &[0x1b],          // a group start
            &[0x19, 1, 2, 3], // a fixed64 cut short
            &[0x02, 0],       // field 0
        ];
        for tail in tails {
            let batch = [&good[..], tail].concat();
            assert!(read(&batch).is_err(), "{tail:?} parses: {:?}", read(&batch));
        }
    }
}
