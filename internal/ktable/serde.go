package ktable

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kstreams-go/kstreams/serde"
)

// ErrBadChange is returned when Change bytes cannot be decoded (unknown flag, bad length) or a
// Change with neither an old nor a new value is serialized.
var ErrBadChange = errors.New("invalid Change encoding")

// ChangeSerde returns the serde of Changes on the repartition topic of KTable.groupBy, with
// Java's byte layout: new value bytes ‖ 0x01; old value bytes ‖ 0x00; or, when both are
// present, zig-zag varint length of the new bytes ‖ new ‖ old ‖ 0x02 (Java 4.x also reads the
// versioned flags 3, 4 and 5, which carry an extra is-latest byte before the flag). A nil inner
// serde is replaced by default.value.serde when the engine initialises the node. Values are
// Change; deserializing gives a Change. Java counterpart: ChangedSerializer / ChangedDeserializer.
func ChangeSerde(inner serde.Serde[any]) serde.Serde[any] { return &changeSerde{inner: inner} }

type changeSerde struct{ inner serde.Serde[any] }

// UseDefaultSerdes picks default.value.serde when no inner serde was given (engine hook).
func (c *changeSerde) UseDefaultSerdes(_, value serde.Serde[any]) {
	if c.inner == nil {
		c.inner = value
	}
}

func (c *changeSerde) String() string { return "ChangedSerde(" + serde.Name(c.inner) + ")" }

func (c *changeSerde) Serialize(topic string, h *serde.Headers, data any) ([]byte, error) {
	if data == nil {
		return nil, nil
	}
	ch, ok := data.(Change)
	if !ok {
		return nil, fmt.Errorf("%w: got %T, want ktable.Change", serde.ErrWrongType, data)
	}
	if c.inner == nil {
		return nil, fmt.Errorf("%w: no value serde for the Change serde (set Grouped serdes or default.value.serde)", serde.ErrWrongType)
	}
	var nb, ob []byte
	var err error
	if ch.New != nil {
		if nb, err = c.inner.Serialize(topic, h, ch.New); err != nil {
			return nil, err
		}
	}
	if ch.Old != nil {
		if ob, err = c.inner.Serialize(topic, h, ch.Old); err != nil {
			return nil, err
		}
	}
	switch {
	case ch.New != nil && ch.Old != nil:
		out := binary.AppendVarint(nil, int64(len(nb)))
		out = append(out, nb...)
		out = append(out, ob...)
		return append(out, 2), nil
	case ch.New != nil:
		return append(append([]byte{}, nb...), 1), nil
	case ch.Old != nil:
		return append(append([]byte{}, ob...), 0), nil
	}
	return nil, fmt.Errorf("%w: both old and new values are null", ErrBadChange)
}

func (c *changeSerde) Deserialize(topic string, h *serde.Headers, data []byte) (any, error) {
	if data == nil {
		return nil, nil
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBadChange)
	}
	if c.inner == nil {
		return nil, fmt.Errorf("%w: no value serde for the Change serde", ErrBadChange)
	}
	flag := data[len(data)-1]
	body := data[:len(data)-1]
	var nb, ob []byte
	switch flag {
	case 0:
		ob = body
	case 1:
		nb = body
	case 2, 5:
		if flag == 5 {
			if len(body) == 0 {
				return nil, fmt.Errorf("%w: short", ErrBadChange)
			}
			body = body[:len(body)-1]
		}
		n, k := binary.Varint(body)
		if k <= 0 || n < 0 || int(n) > len(body)-k {
			return nil, fmt.Errorf("%w: bad new-value length", ErrBadChange)
		}
		nb, ob = body[k:k+int(n)], body[k+int(n):]
	case 3, 4:
		if len(body) == 0 {
			return nil, fmt.Errorf("%w: short", ErrBadChange)
		}
		body = body[:len(body)-1]
		if flag == 3 {
			ob = body
		} else {
			nb = body
		}
	default:
		return nil, fmt.Errorf("%w: unknown flag %d", ErrBadChange, flag)
	}
	var out Change
	var err error
	if nb != nil {
		if out.New, err = c.inner.Deserialize(topic, h, nb); err != nil {
			return nil, err
		}
	}
	if ob != nil {
		if out.Old, err = c.inner.Deserialize(topic, h, ob); err != nil {
			return nil, err
		}
	}
	return out, nil
}
