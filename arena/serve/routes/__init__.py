"""The routes of ``arena serve``, one router per job (see ``arena.serve.app``)."""
