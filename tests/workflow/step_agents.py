"""The built-in LQ and linear-mixture agents behind the plug-in step protocols
(``dprl.agents.plugin``): what a researcher wrapping their own agent writes, used by the
runner tests, the plug-in settings test and the benchmarks."""

from __future__ import annotations


class StepOFU:
    """OFU-RL / Private-OFU-RL (``OFUAgent``) behind the LQ step protocol."""

    def __init__(self, agent):
        self.agent = agent

    def policy(self):
        return self.agent.act().gains  # lines 3-5 of Algorithm 1

    def observe(self, states, controls):
        self.agent.observe(states, controls)  # line 9


class StepLinOpt:
    """A LinOpt agent (VI or PO) behind the linear-mixture step protocol."""

    def __init__(self, agent):
        self.agent = agent

    def policy(self):
        self.agent.begin_episode()
        return self.agent.act_policy()

    def observe(self, states, actions, rewards):
        self.agent.end_episode(states, actions, rewards)
