// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * png_pixels: a PNG's pixels as text, for the tests that check what a
 * browser drew (a screenshot) and have no image library to ask.
 *
 * usage: png_pixels FILE.png [Y0 [Y1]]
 * Prints "WIDTH HEIGHT", then for every pixel of rows Y0 to Y1 (default:
 * none; Y1 defaults to Y0) one line "X Y RRGGBB", alpha dropped.
 *
 * Reads 8-bit, non-interlaced greyscale, grey+alpha, RGB and RGBA images
 * (what Chromium writes); anything else is refused with a message. Exit 0,
 * or 1 with a message on stderr.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct png {
	uint32_t width, height;
	unsigned channels;	/* bytes per pixel */
	unsigned char *pixels;	/* height rows of width * channels, unfiltered */
};

__attribute__((format(printf, 1, 2)))
static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "png_pixels: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int read_all(const char *path, unsigned char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t alloc = 1 << 16, n;
	unsigned char *buf;

	if (!f)
		return fail("cannot open '%s'", path);
	buf = malloc(alloc);
	*len = 0;
	while (buf && (n = fread(buf + *len, 1, alloc - *len, f)) > 0) {
		*len += n;
		if (*len == alloc)
			buf = realloc(buf, alloc *= 2);
	}
	fclose(f);
	if (!buf)
		return fail("out of memory reading '%s'", path);
	*out = buf;
	return 0;
}

static unsigned paeth(unsigned a, unsigned b, unsigned c)
{
	int p = (int)a + (int)b - (int)c;
	int pa = abs(p - (int)a), pb = abs(p - (int)b), pc = abs(p - (int)c);

	if (pa <= pb && pa <= pc)
		return a;
	return pb <= pc ? b : c;
}

/* Undoes the per-row filters (PNG spec, section 9) in place into png->pixels. */
static int unfilter(struct png *png, const unsigned char *raw)
{
	size_t stride = (size_t)png->width * png->channels, y, x;
	unsigned bpp = png->channels;

	for (y = 0; y < png->height; y++) {
		const unsigned char *in = raw + y * (stride + 1) + 1;
		unsigned char *row = png->pixels + y * stride;
		const unsigned char *up = y ? row - stride : NULL;
		unsigned type = in[-1];

		for (x = 0; x < stride; x++) {
			unsigned a = x >= bpp ? row[x - bpp] : 0, b = up ? up[x] : 0;
			unsigned c = up && x >= bpp ? up[x - bpp] : 0;

			switch (type) {
			case 0: row[x] = in[x]; break;
			case 1: row[x] = in[x] + a; break;
			case 2: row[x] = in[x] + b; break;
			case 3: row[x] = in[x] + (a + b) / 2; break;
			case 4: row[x] = in[x] + paeth(a, b, c); break;
			default: return fail("row %zu: unknown filter %u", y, type);
			}
		}
	}
	return 0;
}

static int png_read(struct png *png, const char *path)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	unsigned char *file = NULL, *idat = NULL, *raw;
	size_t len = 0, pos = 8, idat_len = 0;
	uLongf raw_len;
	int err = -1, ctype = -1;

	if (read_all(path, &file, &len))
		return -1;
	if (len < 8 || memcmp(file, sig, 8)) {
		fail("'%s' is not a PNG file", path);
		goto out;
	}
	while (pos + 12 <= len) {
		uint32_t n = be32(file + pos);
		const unsigned char *type = file + pos + 4, *data = file + pos + 8;

		if (n > len - pos - 12) {
			fail("'%s' is truncated", path);
			goto out;
		}
		if (!memcmp(type, "IHDR", 4) && n >= 13) {
			png->width = be32(data);
			png->height = be32(data + 4);
			ctype = data[9];
			if (data[8] != 8 || data[12] != 0 ||
			    (ctype != 0 && ctype != 2 && ctype != 4 && ctype != 6)) {
				fail("'%s': only 8-bit non-interlaced grey or RGB(A) images are read", path);
				goto out;
			}
			png->channels = ctype == 0 ? 1 : ctype == 4 ? 2 : ctype == 2 ? 3 : 4;
		} else if (!memcmp(type, "IDAT", 4)) {
			idat = realloc(idat, idat_len + n);
			memcpy(idat + idat_len, data, n);
			idat_len += n;
		} else if (!memcmp(type, "IEND", 4)) {
			break;
		}
		pos += 12 + n;
	}
	if (ctype < 0 || !idat || !png->width || !png->height || png->width > 1 << 15 ||
	    png->height > 1 << 15) {
		fail("'%s' has no usable image header or data", path);
		goto out;
	}
	raw_len = (uLongf)png->height * ((size_t)png->width * png->channels + 1);
	raw = malloc(raw_len);
	png->pixels = malloc((size_t)png->height * png->width * png->channels);
	if (uncompress(raw, &raw_len, idat, idat_len) != Z_OK ||
	    raw_len != (uLongf)png->height * ((size_t)png->width * png->channels + 1))
		fail("'%s': the image data does not inflate to its size", path);
	else
		err = unfilter(png, raw);
	free(raw);
out:
	free(idat);
	free(file);
	return err;
}

int main(int argc, char **argv)
{
	struct png png = { 0 };
	long y0 = -1, y1 = -1, y;
	uint32_t x;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: png_pixels FILE.png [Y0 [Y1]]\n");
		return 1;
	}
	if (png_read(&png, argv[1]))
		return 1;
	if (argc > 2)
		y0 = y1 = strtol(argv[2], NULL, 10);
	if (argc > 3)
		y1 = strtol(argv[3], NULL, 10);
	printf("%u %u\n", png.width, png.height);
	for (y = y0 < 0 ? 0 : y0; y0 >= 0 && y <= y1 && y < (long)png.height; y++)
		for (x = 0; x < png.width; x++) {
			const unsigned char *p = png.pixels + ((size_t)y * png.width + x) * png.channels;

			if (png.channels < 3)
				printf("%u %ld %02x%02x%02x\n", x, y, p[0], p[0], p[0]);
			else
				printf("%u %ld %02x%02x%02x\n", x, y, p[0], p[1], p[2]);
		}
	free(png.pixels);
	return 0;
}
