/* Decoding a window of a JPEG with libjpeg-turbo: the rows above the window are
 * skipped (entropy-decoded, no IDCT, upsampling or colour conversion), the rows below
 * it are never read, and only the iMCU columns that hold it are decoded
 * (jpeg_crop_scanline). The IDCT (accurate or fast integer) and fancy upsampling are
 * those of a whole decode; ndd_jpeg_decode_window returns the same pixels as decoding
 * the whole image and cutting the window (tests/ops/test_jpeg_region.py), which is
 * what the reference's cropping decoders give.
 *
 * libjpeg reports errors by calling error_exit, which must not return: it jumps back
 * here. A warning (a damaged stream libjpeg would decode anyway) is treated as an
 * error too, so that the caller decodes the file the careful way instead. */
#ifndef NDD_JPEG_REGION_H
#define NDD_JPEG_REGION_H

#include <setjmp.h>
#include <stddef.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <string.h>

#include <jpeglib.h>

enum { NDD_JPEG_RGB = 0, NDD_JPEG_BGR = 1, NDD_JPEG_GRAY = 2, NDD_JPEG_CMYK = 3 };

/* Results: the window was written; the stream is not a JPEG this decoder takes or
 * libjpeg failed (the caller's other decoder decides, and reports why); the scratch
 * is too small (*scratch_size says how large it must be). */
enum { NDD_JPEG_DONE = 0, NDD_JPEG_DECLINED = 1, NDD_JPEG_FAILED = 2, NDD_JPEG_SCRATCH = 3 };

/* NDD_JPEG_MARGIN: see ndd_jpeg_decode_window. NDD_JPEG_ROWS_PER_CALL: rows read at
 * once; one at a time costs libjpeg a copy of every row (windows decoded 15% slower on
 * 500x375 photos), 16 make that vanish. */
enum { NDD_JPEG_MARGIN = 2, NDD_JPEG_ROWS_PER_CALL = 16 };

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf escape;
} ndd_jpeg_errors;

static void ndd_jpeg_error_exit(j_common_ptr cinfo)
{
    longjmp(((ndd_jpeg_errors *)cinfo->err)->escape, 1);
}

static void ndd_jpeg_emit_message(j_common_ptr cinfo, int level)
{
    if (level < 0) /* a warning: corrupt data libjpeg would pass over */
        ndd_jpeg_error_exit(cinfo);
}

/* The window (top, left, height, width) of the stored image into `out`, rows of
 * width * channels bytes. Gray and YCbCr / RGB 3-component streams are taken for RGB,
 * BGR and GRAY; CMYK and YCCK 4-component ones for CMYK (the stored ink, YCCK turned
 * into it), and only for it: the others are DECLINED. `scratch` holds the decoded
 * rows when they are wider than the window; the caller keeps it between images rather
 * than have libjpeg allocate rows for every image. */
static int ndd_jpeg_decode_window(const unsigned char *data, size_t size, int space,
                                  int fast_idct, int top, int left, int height, int width,
                                  unsigned char *out, unsigned char *scratch,
                                  size_t *scratch_size)
{
    struct jpeg_decompress_struct cinfo;
    ndd_jpeg_errors errors;
    int channels = space == NDD_JPEG_GRAY ? 1 : space == NDD_JPEG_CMYK ? 4 : 3;
    int ink;
    JDIMENSION first_column, columns;
    size_t skip, row_bytes = (size_t)width * channels, scratch_row;
    int direct;
    int y;
    cinfo.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = ndd_jpeg_error_exit;
    errors.base.emit_message = ndd_jpeg_emit_message;
    jpeg_create_decompress(&cinfo);
    if (setjmp(errors.escape)) {
        jpeg_destroy_decompress(&cinfo);
        return NDD_JPEG_FAILED;
    }
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    ink = cinfo.num_components == 4
          && (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK);
    if (ink != (space == NDD_JPEG_CMYK)
        || (!ink && !(cinfo.num_components == 1 && cinfo.jpeg_color_space == JCS_GRAYSCALE)
            && !(cinfo.num_components == 3
                 && (cinfo.jpeg_color_space == JCS_YCbCr || cinfo.jpeg_color_space == JCS_RGB)))) {
        jpeg_destroy_decompress(&cinfo);
        return NDD_JPEG_DECLINED;
    }
    if (top < 0 || left < 0 || height <= 0 || width <= 0
        || (JDIMENSION)top + (JDIMENSION)height > cinfo.image_height
        || (JDIMENSION)left + (JDIMENSION)width > cinfo.image_width) {
        jpeg_destroy_decompress(&cinfo);
        return NDD_JPEG_DECLINED;
    }
    cinfo.out_color_space = space == NDD_JPEG_GRAY   ? JCS_GRAYSCALE
                            : space == NDD_JPEG_BGR  ? JCS_EXT_BGR
                            : space == NDD_JPEG_CMYK ? JCS_CMYK
                                                     : JCS_EXT_RGB;
    cinfo.dct_method = fast_idct ? JDCT_IFAST : JDCT_ISLOW;
    cinfo.do_fancy_upsampling = TRUE;
    jpeg_start_decompress(&cinfo);
    /* Fancy upsampling of a pixel reads the chroma samples beside its own; at the edges
     * of the decoded columns they are replicated instead. NDD_JPEG_MARGIN more columns on
     * each side (one chroma sample) keep the window's edges as in a whole decode. */
    first_column = (JDIMENSION)(left > NDD_JPEG_MARGIN ? left - NDD_JPEG_MARGIN : 0);
    columns = (JDIMENSION)(left + width) + NDD_JPEG_MARGIN < cinfo.image_width
                  ? (JDIMENSION)(left + width) + NDD_JPEG_MARGIN - first_column
                  : cinfo.image_width - first_column;
    jpeg_crop_scanline(&cinfo, &first_column, &columns);
    skip = (size_t)(left - (int)first_column) * channels;
    /* The decoded columns are wider than the window unless it spans whole iMCU
     * columns (the whole image, say): then rows go straight to `out`. */
    direct = skip == 0 && columns == (JDIMENSION)width;
    scratch_row = (size_t)columns * channels;
    if (!direct && scratch_row * NDD_JPEG_ROWS_PER_CALL > *scratch_size) {
        *scratch_size = scratch_row * NDD_JPEG_ROWS_PER_CALL;
        jpeg_destroy_decompress(&cinfo);
        return NDD_JPEG_SCRATCH;
    }
    if (top > 0)
        jpeg_skip_scanlines(&cinfo, (JDIMENSION)top);
    for (y = 0; y < height;) {
        JSAMPROW rows[NDD_JPEG_ROWS_PER_CALL];
        int wanted = height - y < NDD_JPEG_ROWS_PER_CALL ? height - y : NDD_JPEG_ROWS_PER_CALL;
        int got, i;
        for (i = 0; i < wanted; i++)
            rows[i] = direct ? out + (size_t)(y + i) * row_bytes : scratch + i * scratch_row;
        got = (int)jpeg_read_scanlines(&cinfo, rows, (JDIMENSION)wanted);
        if (got == 0) /* a memory source never suspends: this is not a stream to trust */
            ndd_jpeg_error_exit((j_common_ptr)&cinfo);
        if (!direct)
            for (i = 0; i < got; i++)
                memcpy(out + (size_t)(y + i) * row_bytes, rows[i] + skip, row_bytes);
        y += got;
    }
    jpeg_abort_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return NDD_JPEG_DONE;
}

/* Encode `height` rows of `width` RGB pixels as a baseline JPEG: 4:2:0 chroma, the
 * standard tables scaled to `quality` (1-100), the accurate integer DCT. The stream
 * goes to a buffer libjpeg allocates (*buffer, *size; the caller frees it, also after
 * a failure). */
static int ndd_jpeg_encode_rgb(const unsigned char *rgb, int width, int height, int quality,
                               unsigned char **buffer, unsigned long *size)
{
    struct jpeg_compress_struct cinfo;
    ndd_jpeg_errors errors;
    cinfo.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = ndd_jpeg_error_exit;
    errors.base.emit_message = ndd_jpeg_emit_message;
    jpeg_create_compress(&cinfo);
    if (setjmp(errors.escape)) {
        jpeg_destroy_compress(&cinfo);
        return NDD_JPEG_FAILED;
    }
    jpeg_mem_dest(&cinfo, buffer, size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    cinfo.comp_info[0].h_samp_factor = 2;
    cinfo.comp_info[0].v_samp_factor = 2;
    cinfo.comp_info[1].h_samp_factor = cinfo.comp_info[1].v_samp_factor = 1;
    cinfo.comp_info[2].h_samp_factor = cinfo.comp_info[2].v_samp_factor = 1;
    cinfo.dct_method = JDCT_ISLOW;
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)cinfo.next_scanline * (size_t)width * 3);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return NDD_JPEG_DONE;
}

#endif
