package piproto

import (
	"crypto/sha256"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
)

// ContentSHA256 is the digest a terminal event carries of the content its stream built
// (DoneEvent.content_sha256, ErrorEvent.content_sha256): SHA-256 of the encoding of an
// AssistantMessage holding only content. The encoding is [MarshalCanonical]'s, in field-number
// order at every level, so that the sender and every receiver compute the same bytes.
func ContentSHA256(content []*aiv1.AssistantContent) ([]byte, error) {
	encoded, err := MarshalCanonical(&aiv1.AssistantMessage{Content: content})
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256(encoded)
	return digest[:], nil
}
