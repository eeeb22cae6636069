// The agents' models (see ChatModels).
import { Module } from '@nestjs/common';
import { ChatModels } from './chat-models';

@Module({ providers: [ChatModels], exports: [ChatModels] })
export class ModelsModule {}
