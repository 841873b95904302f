package k6script

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"slices"
)

// The AES modes as WebCrypto defines them, on Go's AES block cipher.

// aesKeyWrap is RFC 3394's key wrap (wrap) or unwrap with the default
// initial value.
func aesKeyWrap(block cipher.Block, data []byte, wrap bool) ([]byte, error) {
	iv := [8]byte{0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6}
	n := len(data)/8 - 1 // blocks of key data when unwrapping
	if wrap {
		n = len(data) / 8
	}
	if len(data)%8 != 0 || n < 2 {
		return nil, cerr("OperationError", "AES-KW takes a multiple of 8 bytes, at least 16 to wrap (24 to unwrap), not %d", len(data))
	}
	var a [8]byte
	r := make([]byte, 8*n)
	if wrap {
		a = iv
		copy(r, data)
	} else {
		copy(a[:], data[:8])
		copy(r, data[8:])
	}
	var b [16]byte
	for s := range 6 {
		j := s
		if !wrap {
			j = 5 - s
		}
		for x := range n {
			i := x
			if !wrap {
				i = n - 1 - x
			}
			t := uint64(n*j + i + 1)
			ri := r[8*i : 8*i+8]
			if wrap {
				copy(b[:8], a[:])
				copy(b[8:], ri)
				block.Encrypt(b[:], b[:])
				binary.BigEndian.PutUint64(a[:], binary.BigEndian.Uint64(b[:8])^t)
			} else {
				binary.BigEndian.PutUint64(b[:8], binary.BigEndian.Uint64(a[:])^t)
				copy(b[8:], ri)
				block.Decrypt(b[:], b[:])
				copy(a[:], b[:8])
			}
			copy(ri, b[8:])
		}
	}
	if wrap {
		return append(a[:], r...), nil
	}
	if subtle.ConstantTimeCompare(a[:], iv[:]) != 1 {
		return nil, cerr("OperationError", "AES-KW unwrap failed (wrong key, or altered data)")
	}
	return r, nil
}

// aesCBC is AES-CBC with PKCS#7 padding.
func aesCBC(block cipher.Block, iv, data []byte, encrypt bool) ([]byte, error) {
	if len(iv) != aes.BlockSize {
		return nil, cerr("OperationError", "AES-CBC's iv is %d bytes, not 16", len(iv))
	}
	if encrypt {
		pad := aes.BlockSize - len(data)%aes.BlockSize
		out := append(slices.Clone(data), make([]byte, pad)...)
		for i := len(data); i < len(out); i++ {
			out[i] = byte(pad)
		}
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(out, out)
		return out, nil
	}
	if len(data) == 0 || len(data)%aes.BlockSize != 0 {
		return nil, cerr("OperationError", "AES-CBC ciphertext of %d bytes is not a whole number of blocks", len(data))
	}
	out := slices.Clone(data)
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, out)
	pad := int(out[len(out)-1])
	bad := pad == 0 || pad > aes.BlockSize
	if !bad {
		want := make([]byte, pad)
		for i := range want {
			want[i] = byte(pad)
		}
		bad = subtle.ConstantTimeCompare(out[len(out)-pad:], want) != 1
	}
	if bad {
		return nil, cerr("OperationError", "AES-CBC decryption: bad padding (wrong key or iv, or altered data)")
	}
	return out[:len(out)-pad], nil
}

// aesCTR is AES-CTR as WebCrypto defines it: only the counter block's
// rightmost length bits count up, wrapping within them, and more blocks
// than they can count is an error. (Go's cipher.NewCTR counts with all
// 128 bits, which differs once the low bits wrap.)
func aesCTR(block cipher.Block, counter []byte, length int, data []byte) ([]byte, error) {
	if len(counter) != aes.BlockSize {
		return nil, cerr("OperationError", "AES-CTR's counter is %d bytes, not 16", len(counter))
	}
	if length < 1 || length > 128 {
		return nil, cerr("OperationError", "AES-CTR's length is %d bits: give 1 to 128", length)
	}
	blocks := (len(data) + aes.BlockSize - 1) / aes.BlockSize
	if length < 63 && uint64(blocks) > uint64(1)<<length {
		return nil, cerr("OperationError", "AES-CTR: %d blocks overflow a %d-bit counter", blocks, length)
	}
	hi, lo := binary.BigEndian.Uint64(counter[:8]), binary.BigEndian.Uint64(counter[8:])
	out := make([]byte, len(data))
	var cb, ks [aes.BlockSize]byte
	for off := 0; off < len(data); off += aes.BlockSize {
		binary.BigEndian.PutUint64(cb[:8], hi)
		binary.BigEndian.PutUint64(cb[8:], lo)
		block.Encrypt(ks[:], cb[:])
		end := min(off+aes.BlockSize, len(data))
		subtle.XORBytes(out[off:end], data[off:end], ks[:end-off])
		hi, lo = ctrIncrement(hi, lo, length)
	}
	return out, nil
}

// ctrIncrement adds one to the low length bits of the 128-bit hi:lo,
// leaving the other bits alone.
func ctrIncrement(hi, lo uint64, length int) (uint64, uint64) {
	if length < 64 {
		mask := uint64(1)<<length - 1
		return hi, lo&^mask | (lo+1)&mask
	}
	lo++
	if lo == 0 && length > 64 {
		mask := uint64(1)<<(length-64) - 1 // all ones at length 128: the shift by 64 is 0
		hi = hi&^mask | (hi+1)&mask
	}
	return hi, lo
}

// aesGCM is AES-GCM with the tag appended to the ciphertext.
func aesGCM(block cipher.Block, iv, aad []byte, tagBits int, data []byte, encrypt bool) ([]byte, error) {
	switch tagBits {
	case 96, 104, 112, 120, 128:
	case 32, 64:
		return nil, cerr("NotSupportedError", "AES-GCM tagLength %d is not supported: use 96 to 128", tagBits)
	default:
		return nil, cerr("OperationError", "AES-GCM tagLength %d: use 96, 104, 112, 120 or 128", tagBits)
	}
	if len(iv) == 0 {
		return nil, cerr("OperationError", "AES-GCM's iv is empty")
	}
	var aead cipher.AEAD
	var err error
	switch {
	case len(iv) == 12:
		aead, err = cipher.NewGCMWithTagSize(block, tagBits/8)
	case tagBits == 128:
		aead, err = cipher.NewGCMWithNonceSize(block, len(iv))
	default:
		return nil, cerr("NotSupportedError", "AES-GCM with a %d-byte iv and a %d-bit tag: use a 12-byte iv or a 128-bit tag", len(iv), tagBits)
	}
	if err != nil {
		return nil, cerr("OperationError", "%v", err)
	}
	if encrypt {
		return aead.Seal(nil, iv, data, aad), nil
	}
	if len(data) < tagBits/8 {
		return nil, cerr("OperationError", "AES-GCM ciphertext of %d bytes is shorter than its tag", len(data))
	}
	out, err := aead.Open(nil, iv, data, aad)
	if err != nil {
		return nil, cerr("OperationError", "AES-GCM decryption failed (wrong key, iv or additionalData, or altered data)")
	}
	return out, nil
}
