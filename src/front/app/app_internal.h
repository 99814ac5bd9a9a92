/*
 * app_internal.h: what the files of the view's controller share (app.c,
 * app_player.c, app_editor.c); front ends use app.h.
 */
#ifndef ATTNSCOPE_FRONT_APP_INTERNAL_H
#define ATTNSCOPE_FRONT_APP_INTERNAL_H

#include "front/app/app.h"

/* Shows a message in the footer (escaped to one safe line). */
void app_say(struct app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Shows msg in the footer as an error. */
void app_complain(struct app *a, const char *msg);

/*
 * Builds a pipeline for cfg and sentence and swaps it in.  Returns 0, or -1
 * (with the reason in the footer) leaving the old pipeline in place.
 */
int app_rebuild(struct app *a, const struct attention_config *cfg, const char *sentence);
/* The same with another source sentence (cross-attention; NULL: none). */
int app_rebuild_with(struct app *a, const struct attention_config *cfg, const char *sentence,
                     const char *source);

/*
 * Sets a knob from a typed line, "NAME VALUE" as its command-line option
 * takes it; 0, or -1 with the reason in the footer.
 */
int app_set_knob(struct app *a, const char *line);

/* app_compare.c: the second model of a comparison. */
void app_compare_close(struct app *a);
/* A lesson's second model (the walkthrough's, borrowed) as the app's comparison. */
enum attn_status app_compare_borrow(struct app *a, const struct model *m, struct attn_error *err);
/* Builds the second's pipeline again when the first's changed (an edit, a knob). */
void app_compare_sync(struct app *a);
/* C: the first's numbers, the second's, their difference. */
void app_compare_key(struct app *a, int key);
/* :compare PATH opens one, :compare alone closes it; 0, or -1 (said). */
int app_compare_command(struct app *a, const char *path);

/* Forgets the picker's list of lessons. */
void app_free_picks(struct app *a);

/* The app's own copy of ablated heads for its model pipeline (layers * heads; NULL: none). */
void app_take_ablated(struct app *a, const unsigned char *ablated);
/* A copy of off (layers * experts of a->src.model) as the app's experts off, or none. */
void app_take_experts_off(struct app *a, const unsigned char *off);

/* Shows step k of the walkthrough being played; before the first or past the last it says so. */
void app_step_to(struct app *a, int k);

/* Opens the lesson picker: the installed lessons and those in the folders searched. */
void app_open_picker(struct app *a);
/* w, on every screen: the walkthroughs to choose from. */
void app_lessons_key(struct app *a, int key);

/* Opens the list of the playing lesson's steps (l); says so when none plays. */
void app_open_step_list(struct app *a);

/* A key while the picker is open. */
void app_picker_key(struct app *a, int key);

/* Opens the editor on text, the cursor at its end; -1 (said) if it cannot hold it. */
int app_edit_start(struct app *a, const char *text);

/* A key while the sentence is edited. */
void app_edit_key(struct app *a, int key);
/*
 * What a model's pipeline is built from: the sentence (or, while the model
 * has written, the text's token ids: generation_source), the app's model,
 * vocabulary, ablated heads (ablated) and top.
 */
void app_source(const struct app *a, const char *sentence, const char *source,
                const unsigned char *ablated, struct pipeline_source *src);
/* G, A and Backspace with text written (app_write.c). */
void app_write_key(struct app *a, int key);
void app_keep_writing(struct app *a, int key);
bool app_can_unwrite(const struct app *a);
/*
 * Before the screens' keys: the terminal's "write more" (true: handled),
 * and any key stops A's writing (true for Esc, which only stops it).
 */
bool app_writing_key(struct app *a, int key);
void app_unwrite(struct app *a);
/* Ends the writing (the text edited, or the model changed): what was written stays text. */
void app_end_writing(struct app *a);
/*
 * A knob of the writing's (its seed, temperature, top-k, top-p) changed to
 * cfg's: the next draw's, no stage changes.  true when that is all that
 * changed (and it was applied, or refused with a message).
 */
bool app_writing_knobs(struct app *a, const struct attention_config *cfg, int *result);



#endif
