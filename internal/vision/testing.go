package vision

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
)

// BombPNG returns a decompression bomb for the tests of every reader of an
// agent's images: a well-formed PNG of about a kilobyte whose header
// declares width x height pixels of 16-bit RGBA (8 bytes a pixel: 100000 x
// 100000 asks a decoder for 80 GB) and whose data holds one row of
// zeros, as an agent can write with a dozen lines of Python.
func BombPNG(width, height int) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc.Sum32())
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = 16, 6 // bit depth 16, colour type RGBA
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	row := make([]byte, 1+min(width, 1<<16)*8) // filter byte, then zeros
	w.Write(row)
	w.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}
