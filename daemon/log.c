// SPDX-License-Identifier: MIT
#include "daemon/log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

static int max_level = LOG_INFO;

/*
 * Whether stderr is the journal's stream ($JOURNAL_STREAM names its device
 * and inode): there a "<N>" prefix gives each line its priority; on a
 * terminal or in a file, lines are plain, warnings and errors so marked.
 */
static bool to_journal(void)
{
	static int known = -1;

	if (known < 0) {
		const char *js = getenv("JOURNAL_STREAM");
		unsigned long long dev, ino;
		struct stat st;

		known = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
			fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
	}
	return known;
}

static const char *plain_prefix(int level)
{
	return level <= LOG_ERR ? "error: " : level == LOG_WARNING ? "warning: " : "";
}

void log_set_max_level(int level)
{
	max_level = level;
}

int log_get_max_level(void)
{
	return max_level;
}

int log_internal(int level, int err, const char *file, int line, const char *fmt, ...)
{
	char buf[2048];
	int saved = errno, n;
	va_list ap;

	if (err < 0)
		err = -err;
	if (level > max_level)
		goto out;

	errno = err;
	n = to_journal() ? snprintf(buf, sizeof(buf), "<%d>", level)
			 : snprintf(buf, sizeof(buf), "%s", plain_prefix(level));
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	if (max_level >= LOG_DEBUG)
		n += snprintf(buf + n, sizeof(buf) - n, " (%s:%d)", file, line);
	if (n >= (int)sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(STDERR_FILENO, buf, n);
out:
	errno = saved;
	return err ? -err : 0;
}

void log_job_finished(const struct log_job *j)
{
	int level = j->error ? LOG_WARNING : LOG_INFO;
	char text[1024], fields[8][160];
	struct iovec iov[9];
	size_t n = 0, i;
	const struct {
		const char *name, *value;
	} extra[] = {
	    {"JOB_KIND", j->kind},    {"SUBJECT", j->subject}, {"JOB_STATE", j->state},
	    {"VERDICT", j->verdict}, {"NODE", j->node},
	};

	snprintf(text, sizeof(text), "job %lld (%s%s%s) %s%s%s%s%s%s%s", j->id, j->kind ?: "?",
		 j->subject ? ", " : "", j->subject ?: "", j->state ?: "?",
		 j->verdict ? ": " : "", j->verdict ?: "", j->node && *j->node ? " at " : "",
		 j->node && *j->node ? j->node : "", j->error ? ": " : "", j->error ?: "");
	if (level > max_level)
		return;
	if (!to_journal()) {
		log_internal(level, 0, __FILE__, __LINE__, "%s", text);
		return;
	}
	snprintf(fields[n], sizeof(fields[n]), "PRIORITY=%d", level);
	n++;
	snprintf(fields[n], sizeof(fields[n]), "MESSAGE_ID=%s", LOG_JOB_FINISHED_ID);
	n++;
	snprintf(fields[n], sizeof(fields[n]), "JOB_ID=%lld", j->id);
	n++;
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]) && n < 8; i++)
		if (extra[i].value && *extra[i].value) {
			snprintf(fields[n], sizeof(fields[n]), "%s=%s", extra[i].name, extra[i].value);
			n++;
		}
	for (i = 0; i < n; i++)
		iov[i] = (struct iovec){fields[i], strlen(fields[i])};
	/* the message last, whole: it may be longer than a field buffer */
	{
		static const char prefix[] = "MESSAGE=";
		char msg[sizeof(prefix) + sizeof(text)];

		snprintf(msg, sizeof(msg), "%s%s", prefix, text);
		iov[n++] = (struct iovec){msg, strlen(msg)};
		if (sd_journal_sendv(iov, (int)n) < 0)
			log_internal(level, 0, __FILE__, __LINE__, "%s", text);
	}
}
